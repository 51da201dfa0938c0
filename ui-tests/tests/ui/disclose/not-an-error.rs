#[derive(Debug, reticent::Disclose)]
enum OrderError {
    #[disclose(argument)]
    NotFound,
}

fn main() {}
