//! A tiny raw HTTP/1.1 client over `tokio::net::TcpStream`, so tests control connections exactly.

use std::net::SocketAddr;

use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;

/// A parsed response.
#[derive(Debug)]
pub struct Resp {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Resp {
    /// First header with that (case-insensitive) name.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("body is not JSON ({e}): {}", self.text()))
    }
}

fn request_bytes(method: &str, path: &str, headers: &[(&str, &str)], body: Option<&str>) -> Vec<u8> {
    let mut out = format!("{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n");
    for (name, value) in headers {
        out.push_str(&format!("{name}: {value}\r\n"));
    }
    let body = body.unwrap_or("");
    if !body.is_empty() || method == "POST" {
        out.push_str(&format!("Content-Length: {}\r\n", body.len()));
    }
    out.push_str("\r\n");
    out.push_str(body);
    out.into_bytes()
}

async fn read_response(reader: &mut BufReader<TcpStream>) -> std::io::Result<Resp> {
    let eof = || std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "connection closed");
    let mut line = String::new();
    if reader.read_line(&mut line).await? == 0 {
        return Err(eof());
    }
    let status = line
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| std::io::Error::other(format!("bad status line {line:?}")))?;
    let mut headers = Vec::new();
    loop {
        line.clear();
        if reader.read_line(&mut line).await? == 0 {
            return Err(eof());
        }
        let trimmed = line.trim_end();
        if trimmed.is_empty() {
            break;
        }
        if let Some((name, value)) = trimmed.split_once(':') {
            headers.push((name.trim().to_owned(), value.trim().to_owned()));
        }
    }
    let mut resp = Resp { status, headers, body: Vec::new() };
    if resp.header("transfer-encoding").is_some_and(|v| v.contains("chunked")) {
        loop {
            line.clear();
            reader.read_line(&mut line).await?;
            let size = usize::from_str_radix(line.trim(), 16).map_err(std::io::Error::other)?;
            let mut chunk = vec![0; size + 2];
            reader.read_exact(&mut chunk).await?;
            if size == 0 {
                break;
            }
            resp.body.extend_from_slice(&chunk[..size]);
        }
    } else if let Some(len) = resp.header("content-length") {
        let len: usize = len.parse().map_err(std::io::Error::other)?;
        resp.body = vec![0; len];
        reader.read_exact(&mut resp.body).await?;
    } else if status != 204 && status != 304 {
        reader.read_to_end(&mut resp.body).await?;
    }
    Ok(resp)
}

/// One request on a fresh connection (`Connection: close`).
pub async fn send(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: Option<&str>,
) -> std::io::Result<Resp> {
    let mut conn = Conn::open(addr).await?;
    let mut all = headers.to_vec();
    all.push(("Connection", "close"));
    conn.send(method, path, &all, body).await
}

/// A keep-alive connection for several requests.
pub struct Conn {
    reader: BufReader<TcpStream>,
}

impl Conn {
    pub async fn open(addr: SocketAddr) -> std::io::Result<Conn> {
        Ok(Conn { reader: BufReader::new(TcpStream::connect(addr).await?) })
    }

    pub async fn send(
        &mut self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: Option<&str>,
    ) -> std::io::Result<Resp> {
        let bytes = request_bytes(method, path, headers, body);
        self.reader.get_mut().write_all(&bytes).await?;
        read_response(&mut self.reader).await
    }
}
