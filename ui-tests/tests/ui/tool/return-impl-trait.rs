/// Say hello.
#[reticent::tool]
fn hello() -> impl std::fmt::Display {
    "hello"
}

fn main() {}
