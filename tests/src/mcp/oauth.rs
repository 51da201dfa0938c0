//! The user's step of an OAuth authorization against a test authorization server that
//! approves at once: its authorization URL answers with a redirect holding the code.

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// GETs `url` (`http://HOST:PORT/...`) without following a redirect and returns the
/// `Location` it redirects to: what a browser would be sent to after the user approved.
pub async fn follow(url: String) -> Result<String, reticent::failures::BoxError> {
    let rest = url
        .strip_prefix("http://")
        .ok_or("the authorization URL is not http://")?;
    let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let path = if path.is_empty() { "/" } else { path };
    let exchange = async {
        let mut stream = tokio::net::TcpStream::connect(authority).await?;
        let request =
            format!("GET {path} HTTP/1.1\r\nhost: {authority}\r\nconnection: close\r\n\r\n");
        stream.write_all(request.as_bytes()).await?;
        let mut answer = Vec::new();
        stream.take(64 * 1024).read_to_end(&mut answer).await?;
        Ok::<_, std::io::Error>(String::from_utf8_lossy(&answer).into_owned())
    };
    let answer = tokio::time::timeout(Duration::from_secs(10), exchange).await??;
    let location = answer
        .lines()
        .take_while(|line| !line.is_empty())
        .find_map(|line| {
            let (name, value) = line.split_once(':')?;
            name.eq_ignore_ascii_case("location")
                .then(|| value.trim().to_owned())
        })
        .ok_or("the authorization server did not redirect")?;
    Ok(location)
}
