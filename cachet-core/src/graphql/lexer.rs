//! A lexer for GraphQL source text, following the lexical grammar of the GraphQL specification
//! (October 2021 edition, §2.1).
//!
//! It exists so that the Service Worker can tell a query from a mutation without shipping a full parser.
//! It recognises every token of the grammar and skips every ignored token:
//!
//! | Grammar item | Handling |
//! |---|---|
//! | `UnicodeBOM`, whitespace (tab, space), line terminators, commas | skipped |
//! | `Comment` (`#` to the end of the line) | skipped |
//! | `Punctuator` (`! $ & ( ) ... : = @ [ ] { \| }`) | [`TokenKind::Punctuator`], [`TokenKind::Spread`] |
//! | `Name` (`[_A-Za-z][_0-9A-Za-z]*`) | [`TokenKind::Name`] |
//! | `IntValue`, `FloatValue` (no leading zeros, no name or digit or `.` right after) | [`TokenKind::Int`], [`TokenKind::Float`] |
//! | `StringValue`: `"..."` with escapes `\" \\ \/ \b \f \n \r \t \uXXXX \u{X...}`, no line terminator | [`TokenKind::String`] |
//! | `StringValue`: block string `"""..."""` where `\"""` is the only escape | [`TokenKind::BlockString`] |
//!
//! Any other character, an unterminated string, a bad escape or a malformed number is a [`LexError`]
//! carrying the byte offset. The lexer never panics and never recurses: it is linear in the input.

/// The kind of one token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenKind {
    /// One of `! $ & ( ) : = @ [ ] { | }`.
    Punctuator(char),
    /// `...`
    Spread,
    /// A name such as `query`, `GetNotes` or `__typename`.
    Name,
    /// An integer literal.
    Int,
    /// A float literal.
    Float,
    /// A quoted string literal.
    String,
    /// A block string literal.
    BlockString,
}

/// A token: its kind and its byte range in the source.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Token {
    /// What the token is.
    pub kind: TokenKind,
    /// Byte offset of its first character.
    pub start: usize,
    /// Byte offset just past its last character.
    pub end: usize,
}

impl Token {
    /// The token's text in `source` (the text it was lexed from).
    pub fn text<'a>(&self, source: &'a str) -> &'a str {
        source.get(self.start..self.end).unwrap_or("")
    }
}

/// The source text is not lexically valid GraphQL.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("GraphQL syntax error at byte {offset}: {message}")]
pub struct LexError {
    /// Byte offset where the problem was found.
    pub offset: usize,
    /// What was wrong.
    pub message: &'static str,
}

/// An iterator over the tokens of a source text; yields `Err` once and then stops.
#[derive(Debug, Clone)]
pub struct Lexer<'a> {
    bytes: &'a [u8],
    position: usize,
    failed: bool,
}

impl<'a> Lexer<'a> {
    /// A lexer at the start of `source`.
    pub fn new(source: &'a str) -> Self {
        Lexer { bytes: source.as_bytes(), position: 0, failed: false }
    }

    fn peek_at(&self, offset: usize) -> Option<u8> {
        self.bytes.get(self.position + offset).copied()
    }

    fn error(&mut self, offset: usize, message: &'static str) -> Option<Result<Token, LexError>> {
        self.failed = true;
        Some(Err(LexError { offset, message }))
    }

    fn skip_ignored(&mut self) {
        while let Some(byte) = self.peek_at(0) {
            match byte {
                b' ' | b'\t' | b'\n' | b'\r' | b',' => self.position += 1,
                // U+FEFF, the byte order mark, is EF BB BF in UTF-8.
                0xEF if self.peek_at(1) == Some(0xBB) && self.peek_at(2) == Some(0xBF) => self.position += 3,
                b'#' => {
                    while let Some(byte) = self.peek_at(0) {
                        if byte == b'\n' || byte == b'\r' {
                            break;
                        }
                        self.position += 1;
                    }
                }
                _ => break,
            }
        }
    }

    fn token(&mut self, kind: TokenKind, start: usize) -> Option<Result<Token, LexError>> {
        Some(Ok(Token { kind, start, end: self.position }))
    }

    fn lex_name(&mut self, start: usize) -> Option<Result<Token, LexError>> {
        while matches!(self.peek_at(0), Some(b'_' | b'0'..=b'9' | b'a'..=b'z' | b'A'..=b'Z')) {
            self.position += 1;
        }
        self.token(TokenKind::Name, start)
    }

    fn skip_digits(&mut self) -> usize {
        let begin = self.position;
        while matches!(self.peek_at(0), Some(b'0'..=b'9')) {
            self.position += 1;
        }
        self.position - begin
    }

    fn lex_number(&mut self, start: usize) -> Option<Result<Token, LexError>> {
        if self.peek_at(0) == Some(b'-') {
            self.position += 1;
        }
        let integer_start = self.position;
        let digits = self.skip_digits();
        if digits == 0 {
            return self.error(self.position, "expected a digit");
        }
        if digits > 1 && self.bytes.get(integer_start) == Some(&b'0') {
            return self.error(integer_start, "a number must not start with 0");
        }
        let mut kind = TokenKind::Int;
        if self.peek_at(0) == Some(b'.') {
            self.position += 1;
            if self.skip_digits() == 0 {
                return self.error(self.position, "expected a digit after `.`");
            }
            kind = TokenKind::Float;
        }
        if matches!(self.peek_at(0), Some(b'e' | b'E')) {
            self.position += 1;
            if matches!(self.peek_at(0), Some(b'+' | b'-')) {
                self.position += 1;
            }
            if self.skip_digits() == 0 {
                return self.error(self.position, "expected a digit in the exponent");
            }
            kind = TokenKind::Float;
        }
        if matches!(self.peek_at(0), Some(b'.' | b'_' | b'a'..=b'z' | b'A'..=b'Z')) {
            return self.error(self.position, "a number must not be followed by `.` or a name");
        }
        self.token(kind, start)
    }

    fn lex_string(&mut self, start: usize) -> Option<Result<Token, LexError>> {
        self.position += 1; // the opening quote
        loop {
            match self.peek_at(0) {
                None | Some(b'\n' | b'\r') => return self.error(start, "unterminated string"),
                Some(b'"') => {
                    self.position += 1;
                    return self.token(TokenKind::String, start);
                }
                Some(b'\\') => {
                    let escape_at = self.position;
                    self.position += 1;
                    match self.peek_at(0) {
                        Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => self.position += 1,
                        Some(b'u') => {
                            self.position += 1;
                            if !self.skip_unicode_escape() {
                                return self.error(escape_at, "invalid unicode escape");
                            }
                        }
                        _ => return self.error(escape_at, "invalid escape sequence"),
                    }
                }
                Some(_) => self.position += 1,
            }
        }
    }

    /// After `\u`: either four hex digits or `{` one to six hex digits `}` naming a scalar value.
    fn skip_unicode_escape(&mut self) -> bool {
        if self.peek_at(0) == Some(b'{') {
            self.position += 1;
            let mut value: u32 = 0;
            let mut count = 0;
            while let Some(digit) = self.peek_at(0).and_then(|byte| char::from(byte).to_digit(16)) {
                value = value.saturating_mul(16).saturating_add(digit);
                count += 1;
                self.position += 1;
            }
            if count == 0 || self.peek_at(0) != Some(b'}') || char::from_u32(value).is_none() {
                return false;
            }
            self.position += 1;
            return true;
        }
        for _ in 0..4 {
            if !self.peek_at(0).is_some_and(|byte| byte.is_ascii_hexdigit()) {
                return false;
            }
            self.position += 1;
        }
        true
    }

    fn lex_block_string(&mut self, start: usize) -> Option<Result<Token, LexError>> {
        self.position += 3;
        loop {
            match self.peek_at(0) {
                None => return self.error(start, "unterminated block string"),
                Some(b'\\') if self.bytes.get(self.position + 1..self.position + 4) == Some(b"\"\"\"") => {
                    self.position += 4;
                }
                Some(b'"') if self.bytes.get(self.position..self.position + 3) == Some(b"\"\"\"") => {
                    self.position += 3;
                    return self.token(TokenKind::BlockString, start);
                }
                Some(_) => self.position += 1,
            }
        }
    }
}

impl Iterator for Lexer<'_> {
    type Item = Result<Token, LexError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        self.skip_ignored();
        let start = self.position;
        let byte = self.peek_at(0)?;
        match byte {
            b'!' | b'$' | b'&' | b'(' | b')' | b':' | b'=' | b'@' | b'[' | b']' | b'{' | b'|' | b'}' => {
                self.position += 1;
                self.token(TokenKind::Punctuator(char::from(byte)), start)
            }
            b'.' => {
                if self.bytes.get(start..start + 3) == Some(b"...") {
                    self.position += 3;
                    self.token(TokenKind::Spread, start)
                } else {
                    self.error(start, "expected `...`")
                }
            }
            b'_' | b'a'..=b'z' | b'A'..=b'Z' => self.lex_name(start),
            b'-' | b'0'..=b'9' => self.lex_number(start),
            b'"' if self.bytes.get(start..start + 3) == Some(b"\"\"\"") => self.lex_block_string(start),
            b'"' => self.lex_string(start),
            _ => self.error(start, "unexpected character"),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn kinds(source: &str) -> Result<Vec<(TokenKind, &str)>, LexError> {
        Lexer::new(source).map(|token| token.map(|t| (t.kind, t.text(source)))).collect()
    }

    #[test]
    fn lexes_every_token_kind_and_skips_ignored_tokens() {
        let source = "\u{FEFF}query Q($a: [Int!] = -1.5e3, $b: String = \"x\\\"y\\u00e9\\u{1F600}\") # comment, { }\r\n\
                      { ...F @skip(if: true) f(s: \"\"\"block \\\"\"\" \"quote\"\"\", i: 0, j: -0, k: 1E+2) }";
        let tokens = kinds(source).unwrap();
        let texts: Vec<&str> = tokens.iter().map(|(_, text)| *text).collect();
        assert_eq!(
            texts,
            [
                "query",
                "Q",
                "(",
                "$",
                "a",
                ":",
                "[",
                "Int",
                "!",
                "]",
                "=",
                "-1.5e3",
                "$",
                "b",
                ":",
                "String",
                "=",
                "\"x\\\"y\\u00e9\\u{1F600}\"",
                ")",
                "{",
                "...",
                "F",
                "@",
                "skip",
                "(",
                "if",
                ":",
                "true",
                ")",
                "f",
                "(",
                "s",
                ":",
                "\"\"\"block \\\"\"\" \"quote\"\"\"",
                "i",
                ":",
                "0",
                "j",
                ":",
                "-0",
                "k",
                ":",
                "1E+2",
                ")",
                "}"
            ]
        );
        assert_eq!(tokens[11].0, TokenKind::Float);
        assert_eq!(tokens[33].0, TokenKind::BlockString);
        assert_eq!(tokens[36].0, TokenKind::Int);
    }

    #[test]
    fn rejects_lexically_invalid_text_with_an_offset() {
        let table: &[(&str, usize, &str)] = &[
            ("\"abc", 0, "unterminated string"),
            ("\"a\nb\"", 0, "unterminated string"),
            ("\"\\q\"", 1, "invalid escape sequence"),
            ("\"\\u12G4\"", 1, "invalid unicode escape"),
            ("\"\\u{110000}\"", 1, "invalid unicode escape"),
            ("\"\"\"abc", 0, "unterminated block string"),
            ("{ a(x: 01) }", 7, "a number must not start with 0"),
            ("{ a(x: 1.) }", 9, "expected a digit after `.`"),
            ("{ a(x: 1e) }", 9, "expected a digit in the exponent"),
            ("{ a(x: 12abc) }", 9, "a number must not be followed by `.` or a name"),
            ("{ a(x: -) }", 8, "expected a digit"),
            ("{ .. }", 2, "expected `...`"),
            ("{ a ; }", 4, "unexpected character"),
            ("{ é }", 2, "unexpected character"),
        ];
        for (source, offset, message) in table {
            let error = kinds(source).unwrap_err();
            assert_eq!((error.offset, error.message), (*offset, *message), "source {source:?}");
        }
    }

    #[test]
    fn unicode_inside_strings_and_comments_is_fine() {
        assert!(kinds("# héllo ✓\n{ a(s: \"日本語 ✓\") }").is_ok());
        assert!(kinds("\"\"\"multi\nline ✓\"\"\"").is_ok());
    }

    #[test]
    fn stops_after_the_first_error() {
        let mut lexer = Lexer::new("; {");
        assert!(lexer.next().unwrap().is_err());
        assert!(lexer.next().is_none());
    }
}
