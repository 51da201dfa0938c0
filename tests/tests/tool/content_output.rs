//! Content outputs (`reticent::content`): whether a tool is a content tool is decided by its
//! output's type when the crate compiles, however the type is spelled; a content tool has no
//! output schema; `Tool::call` returns its blocks as MCP writes them.

use std::io;
use std::sync::Arc;

use reticent::content::{Audio, Content, Contents, Image, Resource};
use reticent::{Tool, ToolContext, Toolbox};
use serde_json::json;

type Shot = Result<Image, io::Error>;

use std::result::Result as Res;

/// An image.
#[reticent::tool]
fn picture() -> Image {
    Image::new([1, 2, 3], "image/png")
}

/// An image, through an alias of `Result`.
#[reticent::tool]
fn aliased() -> Shot {
    Ok(picture())
}

/// Audio, through `io::Result`.
#[reticent::tool]
async fn sound() -> io::Result<Audio> {
    Ok(Audio::new([4], "audio/wav"))
}

/// Resources, through `Result` renamed.
#[reticent::tool]
fn resources() -> Res<Vec<Resource>, io::Error> {
    Ok(vec![
        Resource::text("a://1", "one"),
        Resource::text("a://2", "two"),
    ])
}

/// A mix.
#[reticent::tool]
fn mixed() -> Vec<Content> {
    vec![Content::from("caption"), picture().into()]
}

/// Text, which is not content.
#[reticent::tool]
fn caption() -> String {
    "caption".into()
}

/// Nothing.
#[reticent::tool]
fn nothing() {}

/// An image inside an `Option`: JSON like any other value, not content.
#[reticent::tool]
fn wrapped() -> Option<Image> {
    Some(picture())
}

struct Camera;

#[reticent::tools]
impl Camera {
    /// A snapshot and its caption.
    #[tool]
    fn snapshot(&self) -> Result<Contents, io::Error> {
        Ok(Contents::new().with("gate").with(picture()))
    }
}

#[test]
fn a_content_tool_is_told_by_its_output_type_however_it_is_spelled() {
    let camera: Vec<Arc<dyn Tool>> = Arc::new(Camera).tools();
    let content: [&dyn Tool; 6] = [&Picture, &Aliased, &Sound, &Resources, &Mixed, &*camera[0]];
    for tool in content {
        let definition = tool.definition();
        assert!(definition.content_output, "{}", definition.name);
        assert_eq!(definition.output_schema, None, "{}", definition.name);
    }
    for tool in [&Caption as &dyn Tool, &Nothing, &Wrapped] {
        assert!(
            !tool.definition().content_output,
            "{}",
            tool.definition().name
        );
    }
}

#[tokio::test]
async fn call_returns_the_blocks_as_mcp_writes_them() {
    let call = |tool: &'static dyn Tool| tool.call(json!({}), ToolContext::default());
    assert_eq!(
        call(&Aliased).await.unwrap(),
        json!({"type": "image", "data": "AQID", "mimeType": "image/png"})
    );
    assert_eq!(
        call(&Resources).await.unwrap(),
        json!([
            {"type": "resource", "resource": {"uri": "a://1", "text": "one"}},
            {"type": "resource", "resource": {"uri": "a://2", "text": "two"}},
        ])
    );
    assert_eq!(
        call(&Mixed).await.unwrap(),
        json!([
            {"type": "text", "text": "caption"},
            {"type": "image", "data": "AQID", "mimeType": "image/png"},
        ])
    );
    assert_eq!(
        call(&Sound).await.unwrap(),
        json!({"type": "audio", "data": "BA==", "mimeType": "audio/wav"})
    );
}
