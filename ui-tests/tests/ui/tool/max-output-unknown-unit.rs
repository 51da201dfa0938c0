/// Read a web page.
#[reticent::tool(max_output = "16 kilobytes")]
fn fetch_page(url: String) -> String {
    url
}

fn main() {}
