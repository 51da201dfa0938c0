//! Content tools (`reticent::content`) in the agent loop: the model is shown a description of
//! the blocks, never their data, bounded by the output budget and fenced when untrusted; the
//! caller gets every block; a failure is shown by its kind only.

use std::sync::Arc;

use futures::StreamExt;
use reticent::content::{Content, Contents, Image, Resource};
use reticent::{Agent, AgentEvent, ModelResponse, ScriptedModel, Tool};
use reticent_tests::mcp::{assert_model_never_saw, run_agent};
use reticent_tests::transcript::{last_tool_result, unfenced};
use serde_json::json;

const CANARY: &str = "c4n4ry-sn4psh0t-5e1f";

/// A megabyte of pixels.
const PIXELS: usize = 1 << 20;

#[derive(Debug, thiserror::Error)]
#[error("the camera at rtsp://admin:{CANARY}@10.0.0.7 did not answer")]
struct CameraError;

/// Take a snapshot of a camera, with its caption.
#[reticent::tool(read_only)]
fn snapshot(
    /// The camera.
    camera: String,
) -> Result<Contents, CameraError> {
    if camera == "offline" {
        return Err(CameraError);
    }
    Ok(Contents::new()
        .with(format!("Camera {camera}, 12:00"))
        .with(Image::new(vec![0x5A; PIXELS], "image/png")))
}

/// Read the log of a camera.
#[reticent::tool(read_only, max_output = "64")]
fn camera_log() -> Vec<Content> {
    (0..100)
        .map(|line| Content::from(format!("line {line}")))
        .collect()
}

/// Read a page of the web, as a resource.
#[reticent::tool(read_only, open_world)]
fn page() -> Resource {
    Resource::blob("https://example.com/page.pdf", [1, 2, 3, 4]).with_mime_type("application/pdf")
}

fn calls(name: &str, arguments: serde_json::Value) -> Vec<ModelResponse> {
    vec![
        ModelResponse::tool_call("c1", name, arguments),
        ModelResponse::text("done"),
    ]
}

#[tokio::test]
async fn the_model_is_shown_a_description_and_the_caller_every_block() {
    let tools: Vec<Arc<dyn Tool>> = vec![Arc::new(Snapshot)];
    let model = ScriptedModel::new(calls("snapshot", json!({"camera": "gate"})));
    let agent = Agent::builder(model.clone()).tools(tools).build().unwrap();
    let events: Vec<AgentEvent> = agent.run_stream("look").collect().await;

    let shown = &last_tool_result(&model.requests()[1]).content.clone();
    assert_eq!(
        shown,
        &format!("Camera gate, 12:00\n[image not shown: image/png {PIXELS} bytes]")
    );

    let Some(AgentEvent::Finished(Ok(result))) = events.last() else {
        panic!("{events:#?}")
    };
    // The caller's output holds the image, whole; it reads back as the blocks.
    let whole = result.tool_output("c1").unwrap();
    assert!(whole.len() > PIXELS);
    let blocks: Contents = serde_json::from_str(whole).unwrap();
    assert_eq!(blocks, snapshot("gate".into()).unwrap());
    assert_eq!(result.whole_outputs.len(), 1);
    let succeeded = events.iter().find_map(|event| match event {
        AgentEvent::ToolSucceeded {
            output,
            shown_to_model,
            ..
        } => Some((output, shown_to_model)),
        _ => None,
    });
    assert_eq!(succeeded, Some((&whole.to_owned(), &Some(shown.clone()))));
}

#[tokio::test]
async fn the_description_is_bounded_by_the_output_budget() {
    let (result, model) = run_agent(
        calls("camera_log", json!({})),
        vec![Arc::new(CameraLog)],
        |b| b,
    )
    .await;
    let shown = &last_tool_result(&model.requests()[1]).content.clone();
    assert!(shown.starts_with("line 0\nline 1\n"), "{shown}");
    assert!(shown.contains("left out"), "{shown}");
    assert!(shown.ends_with("line 98\nline 99"), "{shown}");
    assert!(!shown.contains("line 50"), "{shown}");
    let whole: Contents = serde_json::from_str(result.tool_output("c1").unwrap()).unwrap();
    assert_eq!(whole.len(), 100);
}

#[tokio::test]
async fn an_untrusted_description_is_fenced() {
    let (_, model) = run_agent(calls("page", json!({})), vec![Arc::new(Page)], |b| b).await;
    let shown = &last_tool_result(&model.requests()[1]).content.clone();
    assert_ne!(shown, unfenced(shown));
    assert_eq!(
        unfenced(shown),
        "[resource not shown: https://example.com/page.pdf application/pdf 4 bytes]"
    );
}

#[tokio::test]
async fn a_failed_content_tool_is_shown_by_its_kind_only() {
    let (result, model) = run_agent(
        calls("snapshot", json!({"camera": "offline"})),
        vec![Arc::new(Snapshot)],
        |b| b,
    )
    .await;
    assert_eq!(
        last_tool_result(&model.requests()[1]).content,
        "Tool 'snapshot' failed with CameraError"
    );
    assert_model_never_saw(CANARY, &result, &model);
    assert!(result.tool_failures[0].error.to_string().contains(CANARY));
}
