//! Outputs that are not text: images, audio and embedded resources, alone or mixed with text,
//! as MCP content blocks.
//!
//! A `#[tool]` that returns one of these types — [`Image`], [`Audio`], [`Resource`],
//! [`Content`], [`Contents`], or a `Vec` of one of the first four; or a `Result` of one
//! (see [`ContentOutput`]) — is a *content tool*
//! (its [`ToolDefinition::content_output`](crate::ToolDefinition::content_output) is set, decided
//! by the output's type when the crate compiles):
//!
//! ```
//! use reticent::content::{Contents, Image, Resource};
//!
//! # const PNG: &[u8] = b"\x89PNG\r\n\x1a\n";
//! /// Render the chart of a series.
//! #[reticent::tool(read_only)]
//! fn chart(
//!     /// The series to draw.
//!     series: String,
//! ) -> Result<Contents, std::io::Error> {
//!     Ok(Contents::new()
//!         .with(format!("The chart of {series}:"))
//!         .with(Image::new(PNG, "image/png"))
//!         .with(Resource::text("chart://data.csv", "x,y\n1,2\n").with_mime_type("text/csv")))
//! }
//!
//! use reticent::Tool;
//! assert!(Chart.definition().content_output);
//! assert!(Chart.definition().output_schema.is_none());
//! ```
//!
//! Where the output goes:
//!
//! - **An MCP server** (`reticent::mcp::McpServer`) sends each block as the MCP content block
//!   of its kind (`text`, `image`, `audio`, `resource`) in the call's result. A content tool has
//!   no output schema and its results no `structuredContent`. A server's output budget
//!   (`McpServerBuilder::max_output`) cuts the text blocks; images, audio and resources are sent
//!   whole.
//! - **An agent** shows the model a description of the blocks, never their bytes: text as it
//!   is (an embedded text resource too), and for an image, audio or binary resource a note of
//!   what it is, its MIME type and its size (`[image not shown: image/png 67 bytes]`) — the same
//!   description `McpClient` gives the model of a remote tool's images and resources. The
//!   description is bounded by the tool's output budget like any output. The caller gets the
//!   whole output: [`AgentResult::tool_output`](crate::AgentResult::tool_output) and
//!   [`AgentResult::whole_outputs`](crate::AgentResult::whole_outputs) hold the blocks as
//!   JSON, which reads back as [`Contents`] (`serde_json::from_str::<Contents>(..)`).
//! - **[`Tool::call`](crate::Tool::call)** returns the blocks as JSON: MCP's own shape, one
//!   block (an object) for an [`Image`], [`Audio`], [`Resource`] or [`Content`], an array of
//!   them for [`Contents`].
//!
//! A failure of a content tool is classified and shown exactly as any tool's: these types are
//! outputs only.
//!
//! Binary data is held as base64 text (standard alphabet, padded), as MCP sends it:
//! [`Image::new`] encodes bytes, [`Image::from_base64`] takes text that is already encoded and
//! checks it.

mod shown;
mod wire;

use std::fmt;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;

pub(crate) use shown::describe_output;
#[cfg(feature = "mcp-client")]
pub(crate) use shown::{Block, decoded_len, described};

/// Base64 text, checked.
#[derive(Clone, PartialEq, Eq)]
struct Base64(String);

impl Base64 {
    fn encode(bytes: &[u8]) -> Self {
        Self(STANDARD.encode(bytes))
    }

    fn check(text: String) -> Result<Self, InvalidBase64> {
        match STANDARD.decode(&text) {
            Ok(_) => Ok(Self(text)),
            Err(error) => Err(InvalidBase64(error.to_string())),
        }
    }

    fn decode(&self) -> Vec<u8> {
        STANDARD
            .decode(&self.0)
            .expect("base64 text is checked when it is made")
    }

    /// How many bytes the text carries.
    fn decoded_len(&self) -> usize {
        shown::decoded_len(&self.0)
    }
}

impl fmt::Debug for Base64 {
    /// The size, not the data: a megabyte of base64 helps no one reading a log.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "<{} bytes>", self.decoded_len())
    }
}

/// Text that was to be base64 data and is not (standard alphabet, padded, as MCP sends it).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("not base64 data (standard alphabet, padded): {0}")]
pub struct InvalidBase64(String);

/// Declares a binary content type: `Image`, `Audio`.
macro_rules! media {
    ($(#[$doc:meta])* $name:ident, $what:literal, $example:literal) => {
        $(#[$doc])*
        #[derive(Clone, Debug, PartialEq, Eq)]
        pub struct $name {
            data: Base64,
            mime_type: String,
        }

        impl $name {
            #[doc = concat!("The ", $what, " `bytes`, of MIME type `mime_type` (`\"", $example, "\"`).")]
            pub fn new(bytes: impl AsRef<[u8]>, mime_type: impl Into<String>) -> Self {
                Self {
                    data: Base64::encode(bytes.as_ref()),
                    mime_type: mime_type.into(),
                }
            }

            #[doc = concat!("The ", $what, " whose bytes `data` holds as base64 text (standard")]
            /// alphabet, padded), as an API or a file may hand it over; an error when it is not
            /// base64.
            pub fn from_base64(
                data: impl Into<String>,
                mime_type: impl Into<String>,
            ) -> Result<Self, InvalidBase64> {
                Ok(Self {
                    data: Base64::check(data.into())?,
                    mime_type: mime_type.into(),
                })
            }

            /// The MIME type.
            pub fn mime_type(&self) -> &str {
                &self.mime_type
            }

            /// The data as base64 text, as MCP sends it.
            pub fn base64(&self) -> &str {
                &self.data.0
            }

            /// The data, decoded.
            pub fn bytes(&self) -> Vec<u8> {
                self.data.decode()
            }

            /// How many bytes the data holds.
            pub fn len(&self) -> usize {
                self.data.decoded_len()
            }

            /// Whether the data is empty.
            pub fn is_empty(&self) -> bool {
                self.data.0.is_empty()
            }
        }
    };
}

media!(
    /// An image a tool returns: MCP's `image` content block.
    ///
    /// ```
    /// use reticent::content::Image;
    ///
    /// let image = Image::new([1, 2, 3], "image/png");
    /// assert_eq!(image.base64(), "AQID");
    /// assert_eq!(Image::from_base64("AQID", "image/png"), Ok(image));
    /// assert!(Image::from_base64("not base64!", "image/png").is_err());
    /// ```
    Image,
    "image",
    "image/png"
);

media!(
    /// Audio a tool returns: MCP's `audio` content block.
    ///
    /// ```
    /// use reticent::content::Audio;
    ///
    /// # let wav = b"RIFF....WAVEfmt ";
    /// let audio = Audio::new(wav, "audio/wav");
    /// assert_eq!(audio.bytes(), wav);
    /// assert_eq!(audio.mime_type(), "audio/wav");
    /// ```
    Audio,
    "audio",
    "audio/wav"
);

/// A resource a tool returns with its contents, text or binary: MCP's `resource` content block
/// (an embedded resource).
///
/// ```
/// use reticent::content::Resource;
///
/// let report = Resource::text("reports://2026/q4", "Revenue rose 4%.").with_mime_type("text/plain");
/// assert_eq!(report.as_text(), Some("Revenue rose 4%."));
/// let archive = Resource::blob("files://q4.zip", b"PK\x03\x04").with_mime_type("application/zip");
/// assert_eq!(archive.blob_base64(), Some("UEsDBA=="));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Resource {
    uri: String,
    mime_type: Option<String>,
    body: Body,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Body {
    Text(String),
    Blob(Base64),
}

impl Resource {
    /// The resource at `uri`, whose contents are `text`.
    pub fn text(uri: impl Into<String>, text: impl Into<String>) -> Self {
        Self {
            uri: uri.into(),
            mime_type: None,
            body: Body::Text(text.into()),
        }
    }

    /// The resource at `uri`, whose contents are `bytes`.
    pub fn blob(uri: impl Into<String>, bytes: impl AsRef<[u8]>) -> Self {
        Self {
            uri: uri.into(),
            mime_type: None,
            body: Body::Blob(Base64::encode(bytes.as_ref())),
        }
    }

    /// The resource at `uri`, whose contents `data` holds as base64 text (standard alphabet,
    /// padded); an error when it is not base64.
    pub fn blob_from_base64(
        uri: impl Into<String>,
        data: impl Into<String>,
    ) -> Result<Self, InvalidBase64> {
        Ok(Self {
            uri: uri.into(),
            mime_type: None,
            body: Body::Blob(Base64::check(data.into())?),
        })
    }

    /// The same resource, of MIME type `mime_type`.
    #[must_use]
    pub fn with_mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.mime_type = Some(mime_type.into());
        self
    }

    /// The resource's URI.
    pub fn uri(&self) -> &str {
        &self.uri
    }

    /// The MIME type, when it has one.
    pub fn mime_type(&self) -> Option<&str> {
        self.mime_type.as_deref()
    }

    /// The contents, when they are text.
    pub fn as_text(&self) -> Option<&str> {
        match &self.body {
            Body::Text(text) => Some(text),
            Body::Blob(_) => None,
        }
    }

    /// The contents as base64 text, when they are binary.
    pub fn blob_base64(&self) -> Option<&str> {
        match &self.body {
            Body::Blob(data) => Some(&data.0),
            Body::Text(_) => None,
        }
    }

    /// The contents decoded, when they are binary.
    pub fn blob_bytes(&self) -> Option<Vec<u8>> {
        match &self.body {
            Body::Blob(data) => Some(data.decode()),
            Body::Text(_) => None,
        }
    }
}

/// One content block: text, an image, audio or an embedded resource.
///
/// Made with `From` from each: `Content::from("text")`, `Image::new(..).into()`.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Content {
    /// Text: MCP's `text` content block.
    Text(String),
    /// An image.
    Image(Image),
    /// Audio.
    Audio(Audio),
    /// An embedded resource.
    Resource(Resource),
}

impl From<String> for Content {
    fn from(text: String) -> Self {
        Self::Text(text)
    }
}

impl From<&str> for Content {
    fn from(text: &str) -> Self {
        Self::Text(text.to_owned())
    }
}

impl From<Image> for Content {
    fn from(image: Image) -> Self {
        Self::Image(image)
    }
}

impl From<Audio> for Content {
    fn from(audio: Audio) -> Self {
        Self::Audio(audio)
    }
}

impl From<Resource> for Content {
    fn from(resource: Resource) -> Self {
        Self::Resource(resource)
    }
}

/// Content blocks in order: text mixed with images, audio and resources, as one output.
///
/// ```
/// use reticent::content::{Audio, Content, Contents, Image};
///
/// let mut contents = Contents::new().with("Here is the chart:").with(Image::new([0], "image/png"));
/// contents.push(Audio::new([0], "audio/wav"));
/// assert_eq!(contents.len(), 3);
/// assert!(matches!(contents.iter().next(), Some(Content::Text(text)) if text == "Here is the chart:"));
///
/// // The whole output of a content tool, as a caller gets it, reads back.
/// let output = serde_json::to_string(&contents).unwrap();
/// assert_eq!(serde_json::from_str::<Contents>(&output).unwrap(), contents);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Contents(Vec<Content>);

impl Contents {
    /// No blocks yet.
    pub fn new() -> Self {
        Self(Vec::new())
    }

    /// The same blocks, with `content` last.
    #[must_use]
    pub fn with(mut self, content: impl Into<Content>) -> Self {
        self.push(content);
        self
    }

    /// Adds `content` last.
    pub fn push(&mut self, content: impl Into<Content>) {
        self.0.push(content.into());
    }

    /// The blocks, in order.
    pub fn iter(&self) -> std::slice::Iter<'_, Content> {
        self.0.iter()
    }

    /// How many blocks there are.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The blocks, as a `Vec`.
    pub fn into_vec(self) -> Vec<Content> {
        self.0
    }
}

impl From<Vec<Content>> for Contents {
    fn from(blocks: Vec<Content>) -> Self {
        Self(blocks)
    }
}

impl From<Contents> for Vec<Content> {
    fn from(contents: Contents) -> Self {
        contents.0
    }
}

impl<C: Into<Content>> FromIterator<C> for Contents {
    fn from_iter<I: IntoIterator<Item = C>>(blocks: I) -> Self {
        Self(blocks.into_iter().map(Into::into).collect())
    }
}

impl<C: Into<Content>> Extend<C> for Contents {
    fn extend<I: IntoIterator<Item = C>>(&mut self, blocks: I) {
        self.0.extend(blocks.into_iter().map(Into::into));
    }
}

impl IntoIterator for Contents {
    type Item = Content;
    type IntoIter = std::vec::IntoIter<Content>;

    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter()
    }
}

impl<'a> IntoIterator for &'a Contents {
    type Item = &'a Content;
    type IntoIter = std::slice::Iter<'a, Content>;

    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

/// The types a tool returns as content blocks, which make it a content tool: [`Image`],
/// [`Audio`], [`Resource`], [`Content`], [`Contents`], and a `Vec` of any of the first four.
/// Sealed.
///
/// A content type inside another output (a field of a struct, an `Option<Image>`) is not
/// content: it is serialized into that output's JSON like any value, and the model is shown
/// that JSON, base64 and all, up to the tool's output budget. Return the content types
/// themselves.
pub trait ContentOutput: sealed::Sealed {}

mod sealed {
    pub trait Sealed {}
}

macro_rules! content_output {
    ($($ty:ty),*) => {$(
        impl sealed::Sealed for $ty {}
        impl ContentOutput for $ty {}
    )*};
}

content_output!(
    Image,
    Audio,
    Resource,
    Content,
    Contents,
    Vec<Image>,
    Vec<Audio>,
    Vec<Resource>,
    Vec<Content>
);
