#[derive(Debug, reticent::Disclose)]
#[disclose(transient)]
struct GatewayUnavailable;

fn main() {}
