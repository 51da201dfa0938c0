use std::rc::Rc;

#[derive(Debug, thiserror::Error, reticent::Disclose)]
enum OrderError {
    #[error("no such order")]
    #[disclose(argument)]
    NotFound(Rc<String>),
}

fn main() {}
