//! The content types as JSON: MCP's content blocks, written as the protocol writes them
//! (`{"type": "image", "data": .., "mimeType": ..}`), so that a content tool's output is what an
//! MCP server sends as it is; read back from the same shape, base64 checked.

use std::fmt;

use serde::de::{self, MapAccess, SeqAccess, Visitor, value::MapAccessDeserializer};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::{Audio, Base64, Body, Content, Contents, Image, Resource};

// ---- writing ---------------------------------------------------------------------------------

/// An `image` or `audio` block.
fn media<S: Serializer>(
    serializer: S,
    kind: &str,
    data: &Base64,
    mime_type: &str,
) -> Result<S::Ok, S::Error> {
    let mut map = serializer.serialize_map(Some(3))?;
    map.serialize_entry("type", kind)?;
    map.serialize_entry("data", &data.0)?;
    map.serialize_entry("mimeType", mime_type)?;
    map.end()
}

impl Serialize for Image {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        media(serializer, "image", &self.data, &self.mime_type)
    }
}

impl Serialize for Audio {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        media(serializer, "audio", &self.data, &self.mime_type)
    }
}

impl Serialize for Resource {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(2))?;
        map.serialize_entry("type", "resource")?;
        map.serialize_entry("resource", &Embedded(self))?;
        map.end()
    }
}

/// A resource's `resource` object: its URI, MIME type, and `text` or `blob`.
struct Embedded<'a>(&'a Resource);

impl Serialize for Embedded<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let resource = self.0;
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("uri", &resource.uri)?;
        if let Some(mime_type) = &resource.mime_type {
            map.serialize_entry("mimeType", mime_type)?;
        }
        match &resource.body {
            Body::Text(text) => map.serialize_entry("text", text)?,
            Body::Blob(data) => map.serialize_entry("blob", &data.0)?,
        }
        map.end()
    }
}

impl Serialize for Content {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Text(text) => {
                let mut map = serializer.serialize_map(Some(2))?;
                map.serialize_entry("type", "text")?;
                map.serialize_entry("text", text)?;
                map.end()
            }
            Self::Image(image) => image.serialize(serializer),
            Self::Audio(audio) => audio.serialize(serializer),
            Self::Resource(resource) => resource.serialize(serializer),
        }
    }
}

impl Serialize for Contents {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(serializer)
    }
}

// ---- reading ---------------------------------------------------------------------------------

/// A content block as MCP writes it. Other fields (`annotations`, `_meta`) are left out.
#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
enum Wire {
    Text { text: String },
    Image(WireMedia),
    Audio(WireMedia),
    Resource { resource: WireResource },
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct WireMedia {
    data: String,
    mime_type: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct WireResource {
    uri: String,
    #[serde(default)]
    mime_type: Option<String>,
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    blob: Option<String>,
}

impl<'de> Deserialize<'de> for Content {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let media =
            |media: WireMedia| Base64::check(media.data).map(|data| (data, media.mime_type));
        Ok(match Wire::deserialize(deserializer)? {
            Wire::Text { text } => Self::Text(text),
            Wire::Image(image) => {
                let (data, mime_type) = media(image).map_err(de::Error::custom)?;
                Self::Image(Image { data, mime_type })
            }
            Wire::Audio(audio) => {
                let (data, mime_type) = media(audio).map_err(de::Error::custom)?;
                Self::Audio(Audio { data, mime_type })
            }
            Wire::Resource { resource } => {
                let body = match (resource.text, resource.blob) {
                    (Some(text), None) => Body::Text(text),
                    (None, Some(blob)) => {
                        Body::Blob(Base64::check(blob).map_err(de::Error::custom)?)
                    }
                    _ => {
                        return Err(de::Error::custom(
                            "a resource holds either `text` or `blob`",
                        ));
                    }
                };
                Self::Resource(Resource {
                    uri: resource.uri,
                    mime_type: resource.mime_type,
                    body,
                })
            }
        })
    }
}

/// Reads one block of the kind `pick` takes out of a [`Content`].
fn one<'de, D: Deserializer<'de>, T>(
    deserializer: D,
    kind: &str,
    pick: fn(Content) -> Option<T>,
) -> Result<T, D::Error> {
    let content = Content::deserialize(deserializer)?;
    pick(content).ok_or_else(|| de::Error::custom(format_args!("expected {kind} content block")))
}

impl<'de> Deserialize<'de> for Image {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        one(deserializer, "an image", |content| match content {
            Content::Image(image) => Some(image),
            _ => None,
        })
    }
}

impl<'de> Deserialize<'de> for Audio {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        one(deserializer, "an audio", |content| match content {
            Content::Audio(audio) => Some(audio),
            _ => None,
        })
    }
}

impl<'de> Deserialize<'de> for Resource {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        one(deserializer, "a resource", |content| match content {
            Content::Resource(resource) => Some(resource),
            _ => None,
        })
    }
}

impl<'de> Deserialize<'de> for Contents {
    /// A list of blocks, or one block: the output of a tool that returns [`Contents`], or one
    /// [`Image`], [`Audio`], [`Resource`] or [`Content`].
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Blocks;

        impl<'de> Visitor<'de> for Blocks {
            type Value = Contents;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a content block or a list of them")
            }

            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Contents, A::Error> {
                let mut blocks = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(64));
                while let Some(block) = seq.next_element()? {
                    blocks.push(block);
                }
                Ok(Contents(blocks))
            }

            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Contents, A::Error> {
                let block = Content::deserialize(MapAccessDeserializer::new(map))?;
                Ok(Contents(vec![block]))
            }
        }

        deserializer.deserialize_any(Blocks)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn blocks_are_written_as_mcp_writes_them() {
        let contents = Contents::new()
            .with("Multiple content types test:")
            .with(Image::new([1, 2, 3], "image/png"))
            .with(Audio::new([4], "audio/wav"))
            .with(Resource::text("test://r", "{\"a\":1}").with_mime_type("application/json"))
            .with(Resource::blob("test://b", [0xff]));
        assert_eq!(
            serde_json::to_value(&contents).unwrap(),
            json!([
                {"type": "text", "text": "Multiple content types test:"},
                {"type": "image", "data": "AQID", "mimeType": "image/png"},
                {"type": "audio", "data": "BA==", "mimeType": "audio/wav"},
                {"type": "resource", "resource": {
                    "uri": "test://r", "mimeType": "application/json", "text": "{\"a\":1}"
                }},
                {"type": "resource", "resource": {"uri": "test://b", "blob": "/w=="}},
            ])
        );
        let back: Contents =
            serde_json::from_value(serde_json::to_value(&contents).unwrap()).unwrap();
        assert_eq!(back, contents);
    }

    #[test]
    fn one_block_reads_as_contents_and_as_its_type() {
        let image = Image::new([9; 10], "image/jpeg");
        let json = serde_json::to_string(&image).unwrap();
        assert_eq!(serde_json::from_str::<Image>(&json).unwrap(), image);
        assert_eq!(
            serde_json::from_str::<Contents>(&json).unwrap().into_vec(),
            vec![Content::Image(image)]
        );
        assert!(serde_json::from_str::<Audio>(&json).is_err());
    }

    #[test]
    fn reading_checks_the_base64_and_the_resource() {
        let bad = json!({"type": "image", "data": "%%%", "mimeType": "image/png"});
        let error = serde_json::from_value::<Content>(bad).unwrap_err();
        assert!(error.to_string().contains("not base64"), "{error}");
        let both = json!({"type": "resource", "resource": {"uri": "x:", "text": "", "blob": ""}});
        assert!(serde_json::from_value::<Content>(both).is_err());
        let extra = json!({"type": "text", "text": "hi", "annotations": {"priority": 1}});
        assert_eq!(
            serde_json::from_value::<Content>(extra).unwrap(),
            Content::from("hi")
        );
    }
}
