/// Look up an order.
#[reticent::tool]
fn look_up_an_order_by_its_id_and_return_the_order_with_all_of_its_lines(
    order_id: String,
) -> String {
    order_id
}

fn main() {}
