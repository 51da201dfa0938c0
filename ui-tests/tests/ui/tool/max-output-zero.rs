/// Read a web page.
#[reticent::tool(max_output = "0KiB")]
fn fetch_page(url: String) -> String {
    url
}

fn main() {}
