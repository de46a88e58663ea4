// SPDX-License-Identifier: GPL-2.0
//! The control protocol carried over TCP: length-prefixed frames holding the hello, the
//! data request and its response, credits, the sender's end-of-data and the receiver's
//! verdict; plus the 32-byte notice a sender SENDs over RDMA after each chunk it WRITEs,
//! and the serialized messages. Every field is big-endian. Decoding never panics: a short,
//! oversized or malformed frame is an error.

use std::fmt;
use std::io::{self, Read, Write};

/// Protocol version; a peer with another one is refused at the hello.
pub const VERSION: u8 = 2;
/// "RRXF"
pub const MAGIC: u32 = 0x5252_5846;
/// Largest frame body either side accepts (a request with the longest path and payload).
pub const MAX_FRAME: usize = 80 * 1024;
/// Longest message argument (`msg echo` text).
pub const MAX_PAYLOAD: usize = u16::MAX as usize;
pub const MAX_PATH: usize = 4096;
pub const MAX_NAME: usize = 255;
pub const MAX_QPS: usize = 8;
/// Size of the notice SENT after each chunk.
pub const NOTICE_LEN: usize = 32;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WireError(pub String);

impl fmt::Display for WireError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "malformed frame: {}", self.0)
    }
}

fn bad<T>(what: &str) -> Result<T, WireError> {
    Err(WireError(what.to_string()))
}

/// What the requester asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// File data from the server to the requester (`get`).
    GetFile = 1,
    /// File data from the requester to the server (`put`).
    PutFile = 2,
    /// Message data from the server to the requester (`msg`, and listings for `get -r`).
    Message = 3,
    /// Create a directory below the server's root (`put -r` of an empty directory).
    Mkdir = 4,
}

impl Kind {
    fn from_u8(v: u8) -> Result<Kind, WireError> {
        Ok(match v {
            1 => Kind::GetFile,
            2 => Kind::PutFile,
            3 => Kind::Message,
            4 => Kind::Mkdir,
            _ => return bad("unknown request kind"),
        })
    }
}

/// Message types a requester can ask for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MsgType {
    Echo = 1,
    Info = 2,
    List = 3,
    Stat = 4,
    /// Every file and directory below a path (for `get -r`).
    Walk = 5,
}

impl MsgType {
    pub fn from_u16(v: u16) -> Result<MsgType, WireError> {
        Ok(match v {
            1 => MsgType::Echo,
            2 => MsgType::Info,
            3 => MsgType::List,
            4 => MsgType::Stat,
            5 => MsgType::Walk,
            _ => return bad("unknown message type"),
        })
    }
}

/// The data request (document 001's "data request packet").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    pub kind: Kind,
    pub id: u32,
    /// Bytes of one receive buffer slot (the receiver's ring is `slots` of them).
    pub buf_size: u32,
    pub slots: u16,
    pub msg_type: u16,
    /// `get`: bytes the requester already has (resume); `put`: 0.
    pub offset: u64,
    /// `put`: the file's size; otherwise 0.
    pub size: u64,
    /// `put`: permission bits of the file.
    pub mode: u32,
    /// Flags: bit 0 resume (`put`: the server keeps a partial file).
    pub flags: u8,
    /// `get`, `msg`: the requester's registered receive ring.
    pub ring_addr: u64,
    pub ring_rkey: u32,
    /// The requester's QP numbers, one per connected QP.
    pub qpns: Vec<u32>,
    pub sender: String,
    pub receiver: String,
    pub path: Vec<u8>,
    /// `msg`: the message's argument.
    pub payload: Vec<u8>,
}

pub const FLAG_RESUME: u8 = 1;

/// Outcome codes in responses and errors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Ok = 0,
    NotFound = 1,
    Refused = 2,
    Invalid = 3,
    Busy = 4,
    Io = 5,
    Checksum = 6,
    Protocol = 7,
}

impl Status {
    fn from_u8(v: u8) -> Result<Status, WireError> {
        Ok(match v {
            0 => Status::Ok,
            1 => Status::NotFound,
            2 => Status::Refused,
            3 => Status::Invalid,
            4 => Status::Busy,
            5 => Status::Io,
            6 => Status::Checksum,
            7 => Status::Protocol,
            _ => return bad("unknown status"),
        })
    }
    pub fn name(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::NotFound => "not found",
            Status::Refused => "refused",
            Status::Invalid => "invalid request",
            Status::Busy => "server busy",
            Status::Io => "I/O error",
            Status::Checksum => "checksum mismatch",
            Status::Protocol => "protocol error",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Response {
    pub status: Status,
    pub id: u32,
    /// `get`, `msg`: bytes that will be moved in all (the file's or message's size).
    pub size: u64,
    /// `put`: the offset the server resumes from; `get`: the requester's offset, echoed.
    pub offset: u64,
    pub mode: u32,
    /// `put`: the server's registered receive ring.
    pub ring_addr: u64,
    pub ring_rkey: u32,
    pub buf_size: u32,
    pub slots: u16,
    /// Error text (empty on success).
    pub text: String,
}

impl Response {
    pub fn error(id: u32, status: Status, text: impl Into<String>) -> Response {
        Response {
            status,
            id,
            size: 0,
            offset: 0,
            mode: 0,
            ring_addr: 0,
            ring_rkey: 0,
            buf_size: 0,
            slots: 0,
            text: text.into(),
        }
    }
}

/// The server's greeting.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hello {
    pub version: u8,
    /// rdma_cm port this connection's QPs connect to.
    pub cm_port: u16,
    pub max_buf: u32,
    pub max_slots: u16,
    pub max_qps: u8,
    pub name: String,
    pub device: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Frame {
    Hello(Hello),
    Request(Request),
    Response(Response),
    /// Receiver to sender: chunks written so far (cumulative); slots before it are free.
    Credit(u64),
    /// Sender to receiver: all data posted; its size and checksum.
    Done {
        size: u64,
        hash: u64,
    },
    /// Receiver to sender: the data arrived intact (Ok) or not.
    Verdict {
        status: Status,
        text: String,
    },
    /// Either side: the transfer stops.
    Abort {
        status: Status,
        text: String,
    },
}

const T_HELLO: u8 = 1;
const T_REQUEST: u8 = 2;
const T_RESPONSE: u8 = 3;
const T_CREDIT: u8 = 4;
const T_DONE: u8 = 5;
const T_VERDICT: u8 = 6;
const T_ABORT: u8 = 7;

/// Appends big-endian fields.
pub struct Enc(pub Vec<u8>);

impl Enc {
    pub fn u8(&mut self, v: u8) -> &mut Self {
        self.0.push(v);
        self
    }
    pub fn u16(&mut self, v: u16) -> &mut Self {
        self.0.extend_from_slice(&v.to_be_bytes());
        self
    }
    pub fn u32(&mut self, v: u32) -> &mut Self {
        self.0.extend_from_slice(&v.to_be_bytes());
        self
    }
    pub fn u64(&mut self, v: u64) -> &mut Self {
        self.0.extend_from_slice(&v.to_be_bytes());
        self
    }
    /// Bytes with a u8 length (truncated to 255).
    pub fn str8(&mut self, s: &str) -> &mut Self {
        let b = s.as_bytes();
        let b = &b[..b.len().min(MAX_NAME)];
        self.u8(b.len() as u8);
        self.0.extend_from_slice(b);
        self
    }
    /// Bytes with a u16 length (truncated to 65535).
    pub fn bytes16(&mut self, b: &[u8]) -> &mut Self {
        let b = &b[..b.len().min(u16::MAX as usize)];
        self.u16(b.len() as u16);
        self.0.extend_from_slice(b);
        self
    }
    pub fn bytes32(&mut self, b: &[u8]) -> &mut Self {
        self.u32(b.len() as u32);
        self.0.extend_from_slice(b);
        self
    }
}

/// Reads big-endian fields; every read checks the length.
pub struct Dec<'a> {
    buf: &'a [u8],
}

impl<'a> Dec<'a> {
    pub fn new(buf: &'a [u8]) -> Dec<'a> {
        Dec { buf }
    }
    pub fn take(&mut self, n: usize) -> Result<&'a [u8], WireError> {
        if self.buf.len() < n {
            return bad("truncated");
        }
        let (a, b) = self.buf.split_at(n);
        self.buf = b;
        Ok(a)
    }
    fn arr<const N: usize>(&mut self) -> Result<[u8; N], WireError> {
        let mut a = [0u8; N];
        a.copy_from_slice(self.take(N)?);
        Ok(a)
    }
    pub fn u8(&mut self) -> Result<u8, WireError> {
        Ok(self.arr::<1>()?[0])
    }
    pub fn u16(&mut self) -> Result<u16, WireError> {
        Ok(u16::from_be_bytes(self.arr()?))
    }
    pub fn u32(&mut self) -> Result<u32, WireError> {
        Ok(u32::from_be_bytes(self.arr()?))
    }
    pub fn u64(&mut self) -> Result<u64, WireError> {
        Ok(u64::from_be_bytes(self.arr()?))
    }
    pub fn str8(&mut self) -> Result<String, WireError> {
        let n = self.u8()? as usize;
        String::from_utf8(self.take(n)?.to_vec()).or_else(|_| bad("name is not UTF-8"))
    }
    pub fn bytes16(&mut self) -> Result<Vec<u8>, WireError> {
        let n = self.u16()? as usize;
        Ok(self.take(n)?.to_vec())
    }
    pub fn bytes32(&mut self, max: usize) -> Result<Vec<u8>, WireError> {
        let n = self.u32()? as usize;
        if n > max {
            return bad("field too long");
        }
        Ok(self.take(n)?.to_vec())
    }
    pub fn text(&mut self) -> Result<String, WireError> {
        Ok(String::from_utf8_lossy(&self.bytes16()?).into_owned())
    }
    pub fn end(&self) -> Result<(), WireError> {
        if self.buf.is_empty() {
            Ok(())
        } else {
            bad("trailing bytes")
        }
    }
}

impl Frame {
    /// The frame body: type byte, then the fields.
    pub fn encode(&self) -> Vec<u8> {
        let mut e = Enc(Vec::with_capacity(64));
        match self {
            Frame::Hello(h) => {
                e.u8(T_HELLO).u32(MAGIC).u8(h.version).u16(h.cm_port);
                e.u32(h.max_buf).u16(h.max_slots).u8(h.max_qps);
                e.str8(&h.name).str8(&h.device);
            }
            Frame::Request(r) => {
                e.u8(T_REQUEST).u8(r.kind as u8).u8(r.flags);
                e.u8(r.qpns.len().min(MAX_QPS) as u8);
                e.u32(r.id).u32(r.buf_size).u16(r.slots).u16(r.msg_type);
                e.u64(r.offset).u64(r.size).u32(r.mode);
                e.u64(r.ring_addr).u32(r.ring_rkey);
                for q in r.qpns.iter().take(MAX_QPS) {
                    e.u32(*q);
                }
                e.str8(&r.sender).str8(&r.receiver);
                e.bytes16(&r.path[..r.path.len().min(MAX_PATH)]);
                e.bytes16(&r.payload);
            }
            Frame::Response(r) => {
                e.u8(T_RESPONSE).u8(r.status as u8).u32(r.id);
                e.u64(r.size).u64(r.offset).u32(r.mode);
                e.u64(r.ring_addr)
                    .u32(r.ring_rkey)
                    .u32(r.buf_size)
                    .u16(r.slots);
                e.bytes16(r.text.as_bytes());
            }
            Frame::Credit(n) => {
                e.u8(T_CREDIT).u64(*n);
            }
            Frame::Done { size, hash } => {
                e.u8(T_DONE).u64(*size).u64(*hash);
            }
            Frame::Verdict { status, text } => {
                e.u8(T_VERDICT).u8(*status as u8).bytes16(text.as_bytes());
            }
            Frame::Abort { status, text } => {
                e.u8(T_ABORT).u8(*status as u8).bytes16(text.as_bytes());
            }
        }
        e.0
    }

    pub fn decode(buf: &[u8]) -> Result<Frame, WireError> {
        let mut d = Dec::new(buf);
        let f = match d.u8()? {
            T_HELLO => {
                if d.u32()? != MAGIC {
                    return bad("not an rrxe-xfer server");
                }
                Frame::Hello(Hello {
                    version: d.u8()?,
                    cm_port: d.u16()?,
                    max_buf: d.u32()?,
                    max_slots: d.u16()?,
                    max_qps: d.u8()?,
                    name: d.str8()?,
                    device: d.str8()?,
                })
            }
            T_REQUEST => {
                let kind = Kind::from_u8(d.u8()?)?;
                let flags = d.u8()?;
                let nq = d.u8()? as usize;
                if nq == 0 || nq > MAX_QPS {
                    return bad("QP count out of range");
                }
                let id = d.u32()?;
                let buf_size = d.u32()?;
                let slots = d.u16()?;
                let msg_type = d.u16()?;
                let offset = d.u64()?;
                let size = d.u64()?;
                let mode = d.u32()?;
                let ring_addr = d.u64()?;
                let ring_rkey = d.u32()?;
                let mut qpns = Vec::with_capacity(nq);
                for _ in 0..nq {
                    qpns.push(d.u32()?);
                }
                let sender = d.str8()?;
                let receiver = d.str8()?;
                let path = d.bytes16()?;
                if path.len() > MAX_PATH {
                    return bad("path too long");
                }
                let payload = d.bytes16()?;
                Frame::Request(Request {
                    kind,
                    id,
                    buf_size,
                    slots,
                    msg_type,
                    offset,
                    size,
                    mode,
                    flags,
                    ring_addr,
                    ring_rkey,
                    qpns,
                    sender,
                    receiver,
                    path,
                    payload,
                })
            }
            T_RESPONSE => Frame::Response(Response {
                status: Status::from_u8(d.u8()?)?,
                id: d.u32()?,
                size: d.u64()?,
                offset: d.u64()?,
                mode: d.u32()?,
                ring_addr: d.u64()?,
                ring_rkey: d.u32()?,
                buf_size: d.u32()?,
                slots: d.u16()?,
                text: d.text()?,
            }),
            T_CREDIT => Frame::Credit(d.u64()?),
            T_DONE => Frame::Done {
                size: d.u64()?,
                hash: d.u64()?,
            },
            T_VERDICT => Frame::Verdict {
                status: Status::from_u8(d.u8()?)?,
                text: d.text()?,
            },
            T_ABORT => Frame::Abort {
                status: Status::from_u8(d.u8()?)?,
                text: d.text()?,
            },
            _ => return bad("unknown frame type"),
        };
        d.end()?;
        Ok(f)
    }
}

/// Writes one frame: a u32 length, then the body.
pub fn write_frame(w: &mut impl Write, f: &Frame) -> io::Result<()> {
    let body = f.encode();
    let mut buf = Vec::with_capacity(4 + body.len());
    buf.extend_from_slice(&(body.len() as u32).to_be_bytes());
    buf.extend_from_slice(&body);
    w.write_all(&buf)
}

/// Reads one frame; `Ok(None)` on a clean end of stream before a frame starts.
pub fn read_frame(r: &mut impl Read) -> io::Result<Option<Frame>> {
    let mut len = [0u8; 4];
    let mut got = 0;
    while got < 4 {
        match r.read(&mut len[got..]) {
            Ok(0) if got == 0 => return Ok(None),
            Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    let n = u32::from_be_bytes(len) as usize;
    if n == 0 || n > MAX_FRAME {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "frame length out of range",
        ));
    }
    let mut body = vec![0u8; n];
    r.read_exact(&mut body)?;
    Frame::decode(&body)
        .map(Some)
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e.to_string()))
}

/// What a sender SENDs after the WRITE of one chunk: which transfer, which chunk, how long.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Notice {
    pub transfer: u32,
    pub chunk: u64,
    pub len: u32,
}

const NOTICE_MAGIC: u32 = 0x5258_4e31; // "RXN1"

impl Notice {
    pub fn encode(&self) -> [u8; NOTICE_LEN] {
        let mut b = [0u8; NOTICE_LEN];
        b[0..4].copy_from_slice(&NOTICE_MAGIC.to_be_bytes());
        b[4..8].copy_from_slice(&self.transfer.to_be_bytes());
        b[8..16].copy_from_slice(&self.chunk.to_be_bytes());
        b[16..20].copy_from_slice(&self.len.to_be_bytes());
        b
    }
    pub fn decode(b: &[u8]) -> Result<Notice, WireError> {
        let mut d = Dec::new(b);
        if d.u32()? != NOTICE_MAGIC {
            return bad("not a chunk notice");
        }
        Ok(Notice {
            transfer: d.u32()?,
            chunk: d.u64()?,
            len: d.u32()?,
        })
    }
}

/// One entry of a listing or a stat answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// b'f' file, b'd' directory, b'l' symlink, b'o' other.
    pub kind: u8,
    pub size: u64,
    pub mode: u32,
    pub mtime: i64,
    pub name: Vec<u8>,
}

/// Serialized messages the server answers `msg` requests with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Message {
    Echo(Vec<u8>),
    Info(Vec<(String, String)>),
    List(Vec<Entry>),
    Stat(Entry),
    Walk(Vec<Entry>),
}

/// Most entries a listing or walk carries.
pub const MAX_ENTRIES: usize = 100_000;

impl Message {
    pub fn msg_type(&self) -> MsgType {
        match self {
            Message::Echo(_) => MsgType::Echo,
            Message::Info(_) => MsgType::Info,
            Message::List(_) => MsgType::List,
            Message::Stat(_) => MsgType::Stat,
            Message::Walk(_) => MsgType::Walk,
        }
    }

    pub fn encode(&self) -> Vec<u8> {
        let mut e = Enc(Vec::new());
        e.u16(self.msg_type() as u16);
        let ent = |e: &mut Enc, x: &Entry| {
            e.u8(x.kind).u64(x.size).u32(x.mode).u64(x.mtime as u64);
            e.bytes16(&x.name);
        };
        match self {
            Message::Echo(b) => {
                e.bytes32(b);
            }
            Message::Info(kv) => {
                e.u16(kv.len() as u16);
                for (k, v) in kv.iter().take(u16::MAX as usize) {
                    e.bytes16(k.as_bytes()).bytes16(v.as_bytes());
                }
            }
            Message::List(v) | Message::Walk(v) => {
                e.u32(v.len() as u32);
                for x in v {
                    ent(&mut e, x);
                }
            }
            Message::Stat(x) => ent(&mut e, x),
        }
        e.0
    }

    pub fn decode(b: &[u8]) -> Result<Message, WireError> {
        let mut d = Dec::new(b);
        let ent = |d: &mut Dec<'_>| -> Result<Entry, WireError> {
            Ok(Entry {
                kind: d.u8()?,
                size: d.u64()?,
                mode: d.u32()?,
                mtime: d.u64()? as i64,
                name: d.bytes16()?,
            })
        };
        let m = match MsgType::from_u16(d.u16()?)? {
            MsgType::Echo => Message::Echo(d.bytes32(u32::MAX as usize)?),
            MsgType::Info => {
                let n = d.u16()?;
                let mut kv = Vec::new();
                for _ in 0..n {
                    let k = d.text()?;
                    let v = d.text()?;
                    kv.push((k, v));
                }
                Message::Info(kv)
            }
            t @ (MsgType::List | MsgType::Walk) => {
                let n = d.u32()? as usize;
                if n > MAX_ENTRIES {
                    return bad("too many entries");
                }
                let mut v = Vec::new();
                for _ in 0..n {
                    v.push(ent(&mut d)?);
                }
                if t == MsgType::List {
                    Message::List(v)
                } else {
                    Message::Walk(v)
                }
            }
            MsgType::Stat => Message::Stat(ent(&mut d)?),
        };
        d.end()?;
        Ok(m)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn kind() -> impl Strategy<Value = Kind> {
        prop_oneof![
            Just(Kind::GetFile),
            Just(Kind::PutFile),
            Just(Kind::Message),
            Just(Kind::Mkdir)
        ]
    }
    fn status() -> impl Strategy<Value = Status> {
        (0u8..8).prop_map(|v| Status::from_u8(v).unwrap_or(Status::Ok))
    }
    fn name() -> impl Strategy<Value = String> {
        "[a-zA-Z0-9._:-]{0,40}"
    }
    prop_compose! {
        fn request()(kind in kind(), id: u32, buf_size: u32, slots: u16, msg_type: u16,
                     offset: u64, size: u64, mode: u32, flags: u8, ring_addr: u64,
                     ring_rkey: u32, qpns in prop::collection::vec(any::<u32>(), 1..=MAX_QPS),
                     sender in name(), receiver in name(),
                     path in prop::collection::vec(any::<u8>(), 0..300),
                     payload in prop::collection::vec(any::<u8>(), 0..300)) -> Request {
            Request { kind, id, buf_size, slots, msg_type, offset, size, mode, flags, ring_addr,
                      ring_rkey, qpns, sender, receiver, path, payload }
        }
    }
    prop_compose! {
        fn response()(status in status(), id: u32, size: u64, offset: u64, mode: u32,
                      ring_addr: u64, ring_rkey: u32, buf_size: u32, slots: u16,
                      text in "\\PC{0,60}") -> Response {
            Response { status, id, size, offset, mode, ring_addr, ring_rkey, buf_size, slots, text }
        }
    }
    fn frame() -> impl Strategy<Value = Frame> {
        prop_oneof![
            request().prop_map(Frame::Request),
            response().prop_map(Frame::Response),
            any::<u64>().prop_map(Frame::Credit),
            (any::<u64>(), any::<u64>()).prop_map(|(size, hash)| Frame::Done { size, hash }),
            (status(), "\\PC{0,40}").prop_map(|(status, text)| Frame::Verdict { status, text }),
            (status(), "\\PC{0,40}").prop_map(|(status, text)| Frame::Abort { status, text }),
            (
                any::<u16>(),
                any::<u32>(),
                any::<u16>(),
                1u8..9,
                name(),
                name()
            )
                .prop_map(|(cm_port, max_buf, max_slots, max_qps, name, device)| {
                    Frame::Hello(Hello {
                        version: VERSION,
                        cm_port,
                        max_buf,
                        max_slots,
                        max_qps,
                        name,
                        device,
                    })
                }),
        ]
    }
    prop_compose! {
        fn entry()(kind in prop::sample::select(vec![b'f', b'd', b'l', b'o']), size: u64,
                   mode: u32, mtime: i64,
                   name in prop::collection::vec(any::<u8>(), 0..64)) -> Entry {
            Entry { kind, size, mode, mtime, name }
        }
    }
    fn message() -> impl Strategy<Value = Message> {
        prop_oneof![
            prop::collection::vec(any::<u8>(), 0..2000).prop_map(Message::Echo),
            prop::collection::vec(("[a-z]{1,10}", "\\PC{0,20}"), 0..10).prop_map(Message::Info),
            prop::collection::vec(entry(), 0..50).prop_map(Message::List),
            prop::collection::vec(entry(), 0..50).prop_map(Message::Walk),
            entry().prop_map(Message::Stat),
        ]
    }

    proptest! {
        #[test]
        fn frame_round_trips(f in frame()) {
            let mut wire = Vec::new();
            write_frame(&mut wire, &f).unwrap();
            let back = read_frame(&mut &wire[..]).unwrap().unwrap();
            prop_assert_eq!(back, f);
        }

        #[test]
        fn frame_decoder_never_panics(b in prop::collection::vec(any::<u8>(), 0..200)) {
            let _ = Frame::decode(&b);
            let _ = read_frame(&mut &b[..]);
        }

        #[test]
        fn truncated_frames_are_errors(f in frame(), cut in 0usize..1000) {
            let body = f.encode();
            let cut = cut % body.len();
            prop_assert!(Frame::decode(&body[..cut]).is_err());
        }

        #[test]
        fn trailing_bytes_are_errors(f in frame(), extra in prop::collection::vec(any::<u8>(), 1..8)) {
            let mut body = f.encode();
            body.extend_from_slice(&extra);
            prop_assert!(Frame::decode(&body).is_err());
        }

        #[test]
        fn message_round_trips(m in message()) {
            prop_assert_eq!(Message::decode(&m.encode()).unwrap(), m);
        }

        #[test]
        fn message_decoder_never_panics(b in prop::collection::vec(any::<u8>(), 0..300)) {
            let _ = Message::decode(&b);
        }

        #[test]
        fn notice_round_trips(transfer: u32, chunk: u64, len: u32) {
            let n = Notice { transfer, chunk, len };
            prop_assert_eq!(Notice::decode(&n.encode()).unwrap(), n);
        }
    }

    #[test]
    fn request_layout_is_fixed() {
        let r = Request {
            kind: Kind::GetFile,
            id: 7,
            buf_size: 0x10_0000,
            slots: 16,
            msg_type: 0,
            offset: 0,
            size: 0,
            mode: 0,
            flags: 0,
            ring_addr: 0x1122_3344_5566_7788,
            ring_rkey: 0xabcd,
            qpns: vec![0x11],
            sender: "a".into(),
            receiver: "b".into(),
            path: b"x".to_vec(),
            payload: vec![],
        };
        let b = Frame::Request(r).encode();
        assert_eq!(&b[..4], &[T_REQUEST, 1, 0, 1]);
        assert_eq!(&b[4..8], &7u32.to_be_bytes());
        assert_eq!(&b[8..12], &0x10_0000u32.to_be_bytes());
        assert_eq!(&b[12..14], &16u16.to_be_bytes());
        assert_eq!(&b[36..44], &0x1122_3344_5566_7788u64.to_be_bytes());
        assert_eq!(&b[44..48], &0xabcdu32.to_be_bytes());
        assert_eq!(&b[48..52], &0x11u32.to_be_bytes());
        assert_eq!(&b[52..], &[1, b'a', 1, b'b', 0, 1, b'x', 0, 0]);
    }

    #[test]
    fn bad_counts_are_refused() {
        let mut b = Frame::Credit(1).encode();
        b[0] = T_REQUEST;
        assert!(Frame::decode(&b).is_err());
        // a frame length of zero or over the limit
        assert!(read_frame(&mut &[0u8, 0, 0, 0][..]).is_err());
        assert!(read_frame(&mut &[0u8, 1, 0, 1, 0][..]).is_err());
        assert!(read_frame(&mut &[][..]).unwrap().is_none());
    }
}
