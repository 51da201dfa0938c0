mod tools {
    /// Public.
    #[reticent::tool]
    pub fn public_tool() -> u8 {
        1
    }

    /// Crate-visible.
    #[reticent::tool]
    pub(crate) fn crate_tool() -> u8 {
        2
    }

    /// Private, used inside the module.
    #[reticent::tool]
    fn private_tool() -> u8 {
        3
    }

    pub(crate) fn private_name() -> &'static str {
        use reticent::Tool;
        &PrivateTool.definition().name
    }
}

use reticent::Tool;

fn main() {
    assert_eq!(tools::PublicTool.definition().name, "public_tool");
    assert_eq!(tools::CrateTool.definition().name, "crate_tool");
    assert_eq!(tools::public_tool() + tools::crate_tool(), 3);
    assert_eq!(tools::private_name(), "private_tool");
}
