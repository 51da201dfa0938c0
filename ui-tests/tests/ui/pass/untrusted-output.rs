use std::sync::Arc;

use reticent::{Tool, Toolbox};

/// Fetch a web page.
#[reticent::tool(read_only, open_world)]
fn fetch_page(url: String) -> String {
    url
}

/// Read the inbox.
#[reticent::tool(read_only, untrusted_output)]
fn read_inbox() -> String {
    String::new()
}

/// Send an email; its output says only whether it was sent.
#[reticent::tool(open_world, untrusted_output = false)]
fn send_email(to: String) -> String {
    to
}

/// Both, which says the same twice.
#[reticent::tool(open_world, untrusted_output = true)]
fn search(query: String) -> String {
    query
}

/// Look up a balance.
#[reticent::tool(read_only, untrusted_output = false)]
fn balance() -> u32 {
    120
}

struct Crm;

#[reticent::tools]
impl Crm {
    /// Read a customer's notes, which customers write themselves.
    #[tool(read_only, untrusted_output)]
    fn customer_notes(&self, customer_id: String) -> String {
        customer_id
    }

    /// Count customers.
    #[tool(read_only)]
    fn count(&self) -> u32 {
        3
    }
}

fn main() {
    assert!(FetchPage.untrusted_output());
    assert!(ReadInbox.untrusted_output());
    // The annotation says what the tool does; `untrusted_output` is separate from it.
    assert!(!ReadInbox.definition().annotations.open_world);
    assert!(!SendEmail.untrusted_output());
    assert!(SendEmail.definition().annotations.open_world);
    assert!(Search.untrusted_output());
    assert!(!Balance.untrusted_output());

    let tools = Arc::new(Crm).tools();
    let untrusted: Vec<bool> = tools.iter().map(|t| t.untrusted_output()).collect();
    assert_eq!(untrusted, [true, false]);
}
