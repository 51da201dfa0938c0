use reticent::Secret;

#[derive(Debug, thiserror::Error, reticent::Disclose)]
enum LoginError {
    #[error("wrong password {0} for this user")]
    #[disclose(argument)]
    WrongPassword(Secret<String>),
}

fn main() {}
