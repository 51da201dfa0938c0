//! What the model is shown of content blocks, written once for the blocks of a local content
//! tool (read from its output's JSON) and those of a remote MCP tool (`McpClient`): text as it
//! is, one block a line; images, audio and binary resources as a note of what they are and
//! their size, never their bytes; resource links as their name and URI.

use std::borrow::Cow;
use std::fmt;

use serde::Deserialize;
use serde::de::{self, Deserializer, Visitor};

use crate::render;

/// One content block, as the model is shown it.
#[derive(Debug)]
pub(crate) enum Block<'a> {
    /// Text shown as it is: a text block, or an embedded resource's text.
    Text(&'a str),
    /// Data the model cannot read, shown as a note: `what` it is (`image`, `audio`,
    /// `resource`), its URI and MIME type when it has them, and its size in bytes.
    Binary {
        what: &'static str,
        uri: Option<&'a str>,
        mime_type: Option<&'a str>,
        bytes: usize,
    },
    /// A link to a resource, shown as its name and URI.
    Link { name: &'a str, uri: &'a str },
    /// A block of a kind this version does not know.
    Unknown,
}

/// The text the model is shown of `blocks`: each block's, one a line.
pub(crate) fn described<'a>(blocks: impl IntoIterator<Item = Block<'a>>) -> String {
    let mut text = String::new();
    for (index, block) in blocks.into_iter().enumerate() {
        if index > 0 {
            text.push('\n');
        }
        match block {
            Block::Text(shown) => text.push_str(shown),
            Block::Binary {
                what,
                uri,
                mime_type,
                bytes,
            } => text.push_str(&render::omitted_content(what, uri, mime_type, bytes)),
            Block::Link { name, uri } => text.push_str(&render::resource_link(name, uri)),
            Block::Unknown => text.push_str(render::UNKNOWN_CONTENT),
        }
    }
    text
}

/// How many bytes base64 text carries.
pub(crate) fn decoded_len(base64: &str) -> usize {
    base64.trim_end_matches('=').len() * 3 / 4
}

/// What the model is shown of the output of a content tool, as the caller gets it (the JSON of
/// one block or of a list of them): [`described`]. `None` when the output is not content
/// blocks (a tool written by hand that says it returns content and does not); the model is
/// then shown it as any output.
///
/// Read without copying the data of images, audio or blobs: only their sizes are taken.
pub(crate) fn describe_output(output: &str) -> Option<String> {
    let views: Vec<View<'_>> = match output.trim_start().as_bytes().first()? {
        b'[' => serde_json::from_str(output).ok()?,
        b'{' => vec![serde_json::from_str(output).ok()?],
        _ => return None,
    };
    Some(described(views.iter().map(View::block)))
}

/// A content block as MCP writes it, with the fields the description needs.
#[derive(Deserialize)]
struct View<'a> {
    #[serde(rename = "type", borrow)]
    kind: Text<'a>,
    #[serde(default, borrow)]
    text: Option<Text<'a>>,
    #[serde(default)]
    data: Option<Size>,
    #[serde(default, borrow, rename = "mimeType")]
    mime_type: Option<Text<'a>>,
    #[serde(default, borrow)]
    resource: Option<ResourceView<'a>>,
    /// A resource link's.
    #[serde(default, borrow)]
    uri: Option<Text<'a>>,
    /// A resource link's.
    #[serde(default, borrow)]
    name: Option<Text<'a>>,
}

/// An embedded resource's `resource`.
#[derive(Deserialize)]
struct ResourceView<'a> {
    #[serde(borrow)]
    uri: Text<'a>,
    #[serde(default, borrow, rename = "mimeType")]
    mime_type: Option<Text<'a>>,
    #[serde(default, borrow)]
    text: Option<Text<'a>>,
    #[serde(default)]
    blob: Option<Size>,
}

impl View<'_> {
    fn block(&self) -> Block<'_> {
        match &*self.kind.0 {
            "text" => Block::Text(text(&self.text).unwrap_or_default()),
            kind @ ("image" | "audio") => Block::Binary {
                what: if kind == "image" { "image" } else { "audio" },
                uri: None,
                mime_type: text(&self.mime_type),
                bytes: self.data.map_or(0, |size| size.0),
            },
            "resource" => match &self.resource {
                Some(ResourceView {
                    text: Some(shown), ..
                }) => Block::Text(&shown.0),
                Some(ResourceView {
                    uri,
                    mime_type,
                    blob: Some(size),
                    ..
                }) => Block::Binary {
                    what: "resource",
                    uri: Some(&uri.0),
                    mime_type: text(mime_type),
                    bytes: size.0,
                },
                _ => Block::Unknown,
            },
            "resource_link" => match (text(&self.name), text(&self.uri)) {
                (Some(name), Some(uri)) => Block::Link { name, uri },
                _ => Block::Unknown,
            },
            _ => Block::Unknown,
        }
    }
}

/// The text of an optional field.
fn text<'v>(field: &'v Option<Text<'_>>) -> Option<&'v str> {
    field.as_ref().map(|t| &*t.0)
}

/// A string, borrowed from the JSON text when it holds no escapes.
struct Text<'a>(Cow<'a, str>);

impl<'de: 'a, 'a> Deserialize<'de> for Text<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Of;

        impl<'de> Visitor<'de> for Of {
            type Value = Text<'de>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }

            fn visit_borrowed_str<E: de::Error>(self, text: &'de str) -> Result<Text<'de>, E> {
                Ok(Text(Cow::Borrowed(text)))
            }

            fn visit_str<E: de::Error>(self, text: &str) -> Result<Text<'de>, E> {
                Ok(Text(Cow::Owned(text.to_owned())))
            }

            fn visit_string<E: de::Error>(self, text: String) -> Result<Text<'de>, E> {
                Ok(Text(Cow::Owned(text)))
            }
        }

        deserializer.deserialize_str(Of)
    }
}

/// The size of base64 data, read without keeping the data.
#[derive(Clone, Copy)]
struct Size(usize);

impl<'de> Deserialize<'de> for Size {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Of;

        impl Visitor<'_> for Of {
            type Value = Size;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("base64 text")
            }

            fn visit_str<E: de::Error>(self, data: &str) -> Result<Size, E> {
                Ok(Size(decoded_len(data)))
            }
        }

        deserializer.deserialize_str(Of)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::content::{Audio, Contents, Image, Resource};

    #[test]
    fn the_model_is_told_what_each_block_is_never_its_bytes() {
        let image = Image::new(vec![7u8; 3000], "image/png");
        let contents = Contents::new()
            .with("Multiple content types test:")
            .with(image.clone())
            .with(Audio::new([1, 2], "audio/wav"))
            .with(
                Resource::text("test://r", "{\"test\":\"data\"}")
                    .with_mime_type("application/json"),
            )
            .with(Resource::blob("test://b", [0u8; 5]).with_mime_type("application/zip"));
        let output = serde_json::to_string(&contents).unwrap();
        let shown = describe_output(&output).unwrap();
        assert_eq!(
            shown,
            "Multiple content types test:\n\
             [image not shown: image/png 3000 bytes]\n\
             [audio not shown: audio/wav 2 bytes]\n\
             {\"test\":\"data\"}\n\
             [resource not shown: test://b application/zip 5 bytes]"
        );
        assert!(!shown.contains(&image.base64()[..16]));

        let one = serde_json::to_string(&image).unwrap();
        assert_eq!(
            describe_output(&one).unwrap(),
            "[image not shown: image/png 3000 bytes]"
        );
    }

    #[test]
    fn an_output_that_is_not_blocks_is_not_described() {
        assert_eq!(describe_output("plain text"), None);
        assert_eq!(describe_output("{\"type\": 3}"), None);
        assert_eq!(describe_output("[1, 2]"), None);
        assert_eq!(describe_output(""), None);
        assert_eq!(
            describe_output(r#"[{"type": "video", "data": "AA=="}]"#).unwrap(),
            render::UNKNOWN_CONTENT
        );
        assert_eq!(
            describe_output(r#"{"type": "resource_link", "name": "a", "uri": "b:"}"#).unwrap(),
            render::resource_link("a", "b:")
        );
    }
}
