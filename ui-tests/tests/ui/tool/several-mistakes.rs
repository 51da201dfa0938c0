#[reticent::tool(name = "has space", timeout = "soon")]
fn lookup_order<T>(order_id: &str, (a, b): (u8, u8)) -> String {
    let _ = (a, b);
    order_id.to_owned()
}

fn main() {}
