//! Content tools (`reticent::content`) over MCP: rmcp's own client receives their outputs as
//! MCP content blocks, with no output schema and no `structuredContent`; their failures are
//! disclosed as any tool's; a server's output budget cuts their text blocks only; and an
//! agent's model is shown the same description of them whether the tool is local or reached
//! through `McpClient`.

use reticent::ModelResponse;
use reticent::content::{Audio, Contents, Image, Resource};
use reticent::mcp::rmcp::model::{CallToolRequestParams, ContentBlock, ResourceContents};
use reticent::mcp::{McpClient, McpServer};
use reticent_tests::mcp::{Failures, connect, run_agent, text};
use reticent_tests::transcript::last_tool_result;
use serde_json::json;

const CANARY: &str = "c4n4ry-c0ntent-91d2";

/// The chart's pixels.
const PIXELS: [u8; 12] = [0x89, b'P', b'N', b'G', 1, 2, 3, 4, 5, 6, 7, 8];

#[derive(Debug, thiserror::Error)]
#[error("the render farm at amqp://render:{CANARY}@10.0.0.9 refused the job")]
struct RenderError;

/// Draw the chart of a series.
#[reticent::tool(read_only)]
fn chart(
    /// The series.
    series: String,
) -> Result<Contents, RenderError> {
    if series == "broken" {
        return Err(RenderError);
    }
    Ok(Contents::new()
        .with(format!("The chart of {series}:"))
        .with(Image::new(PIXELS, "image/png"))
        .with(Resource::text("chart://data.csv", "x,y\n1,2").with_mime_type("text/csv"))
        .with(
            Resource::blob("chart://raw.bin", [0u8; 10]).with_mime_type("application/octet-stream"),
        )
        .with(Audio::new([1, 2, 3], "audio/wav")))
}

/// Take a photo.
#[reticent::tool(read_only)]
fn photo() -> Image {
    Image::new(vec![0xAB; 4096], "image/jpeg")
}

fn server(failures: &Failures) -> McpServer {
    McpServer::builder()
        .tool(Chart)
        .tool(Photo)
        .on_failure(failures.hook())
        .build()
        .unwrap()
}

fn call(name: &'static str, series: Option<&str>) -> CallToolRequestParams {
    let call = CallToolRequestParams::new(name);
    match series {
        Some(series) => call.with_arguments(json!({"series": series}).as_object().unwrap().clone()),
        None => call,
    }
}

/// Ten zero bytes, as base64.
const STANDARD_ZEROS: &str = "AAAAAAAAAAAAAA==";

/// What the model is shown of the chart of `sales`, local or remote.
const SALES_SHOWN: &str = "The chart of sales:\n\
                           [image not shown: image/png 12 bytes]\n\
                           x,y\n1,2\n\
                           [resource not shown: chart://raw.bin application/octet-stream 10 bytes]\n\
                           [audio not shown: audio/wav 3 bytes]";

#[tokio::test]
async fn a_content_tool_is_served_as_its_content_blocks() {
    let connection = connect(server(&Failures::default())).await;
    let tools = connection.client.list_all_tools().await.unwrap();
    // No output schema: the results carry no `structuredContent` for one to describe.
    assert!(
        tools.iter().all(|tool| tool.output_schema.is_none()),
        "{tools:#?}"
    );

    let result = connection
        .client
        .call_tool(call("chart", Some("sales")))
        .await
        .unwrap();
    assert_ne!(result.is_error, Some(true));
    assert_eq!(result.structured_content, None);
    let [text, image, csv, blob, audio] = &result.content[..] else {
        panic!("five blocks: {result:#?}");
    };
    assert_eq!(text.as_text().unwrap().text, "The chart of sales:");
    let image = image.as_image().unwrap();
    assert_eq!(image.mime_type, "image/png");
    assert_eq!(image.data, Image::new(PIXELS, "").base64());
    let ContentBlock::Resource(csv) = csv else {
        panic!("{csv:?}")
    };
    assert!(matches!(
        &csv.resource,
        ResourceContents::TextResourceContents { uri, mime_type: Some(mime), text, .. }
            if uri == "chart://data.csv" && mime == "text/csv" && text == "x,y\n1,2"
    ));
    let ContentBlock::Resource(blob) = blob else {
        panic!("{blob:?}")
    };
    assert!(matches!(
        &blob.resource,
        ResourceContents::BlobResourceContents { uri, blob, .. }
            if uri == "chart://raw.bin" && *blob == STANDARD_ZEROS
    ));
    assert_eq!(audio.as_audio().unwrap().mime_type, "audio/wav");

    // One block alone is a result of one block.
    let result = connection
        .client
        .call_tool(call("photo", None))
        .await
        .unwrap();
    let [ContentBlock::Image(photo)] = &result.content[..] else {
        panic!("one image: {result:#?}");
    };
    assert_eq!(
        Image::from_base64(&*photo.data, "").unwrap().bytes(),
        vec![0xAB; 4096]
    );
    assert_eq!(result.structured_content, None);
}

#[tokio::test]
async fn a_content_tools_failure_is_disclosed_as_any_tools() {
    let failures = Failures::default();
    let connection = connect(server(&failures)).await;
    let result = connection
        .client
        .call_tool(call("chart", Some("broken")))
        .await
        .unwrap();
    assert_eq!(result.is_error, Some(true));
    assert_eq!(text(&result), "Tool 'chart' failed with RenderError");
    assert!(!connection.received().contains(CANARY));
    // The operator gets all of it.
    assert!(failures.one().error.to_string().contains(CANARY));
}

#[tokio::test]
async fn a_server_budget_cuts_text_blocks_and_sends_the_rest_whole() {
    let server = McpServer::builder()
        .tool(Chart)
        .max_output(8)
        .build()
        .unwrap();
    let connection = connect(server).await;
    let result = connection
        .client
        .call_tool(call("chart", Some("sales")))
        .await
        .unwrap();
    let text = &result.content[0].as_text().unwrap().text;
    assert!(text.contains("left out"), "{text}");
    let image = result.content[1].as_image().unwrap();
    assert_eq!(
        Image::from_base64(&*image.data, "").unwrap().bytes(),
        PIXELS
    );
}

#[tokio::test]
async fn the_model_is_shown_one_description_local_or_remote() {
    let script = || {
        vec![
            ModelResponse::tool_call("c1", "chart", json!({"series": "sales"})),
            ModelResponse::text("done"),
        ]
    };

    // Local: the model sees the description; the caller gets every block.
    let (result, model) = run_agent(script(), vec![std::sync::Arc::new(Chart)], |b| b).await;
    let local = last_tool_result(&model.requests()[1]).content.clone();
    assert_eq!(local, SALES_SHOWN);
    let whole: Contents = serde_json::from_str(result.tool_output("c1").unwrap()).unwrap();
    assert_eq!(whole, chart("sales".into()).unwrap());

    // Remote: `McpClient` describes the blocks it receives the same way.
    let (server_end, client_end) = tokio::io::duplex(64 * 1024);
    let (serving, client) = tokio::join!(
        server(&Failures::default()).serve(server_end),
        McpClient::builder()
            .trusted_output(true)
            .connect(tokio::io::split(client_end)),
    );
    let (_serving, client) = (serving.unwrap(), client.unwrap());
    let tools = client.tools().await.unwrap();
    assert!(tools.iter().all(|tool| !tool.definition().content_output));
    let (_, model) = run_agent(script(), tools, |b| b).await;
    assert_eq!(last_tool_result(&model.requests()[1]).content, local);
}
