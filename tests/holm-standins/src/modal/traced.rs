//! The contract trace of Modal's gRPC calls: a layer in front of both
//! services that records, for each call, the [`Trace`] the HTTP stand-ins'
//! gates record ([`crate::trace`]), read from the gRPC request itself.
//!
//! - **route**: the gRPC path, `/modal.client.ModalClient/SandboxCreate`;
//! - **agent**: its `user-agent`;
//! - **headers**: its metadata's key names, less [`TRANSPORT`];
//! - **query**: none (gRPC has none);
//! - **body**: the request message's shape: each field that is set (on the
//!   wire: proto3 leaves a default value out), by its `.proto` name, with
//!   its kind ([`kind`]); a nested message's fields as `a.b`, a repeated
//!   field's items as `a[]`, a map's values as `a.*` (a map's keys are the
//!   caller's data, as JSON metadata's are), and a field the descriptor
//!   does not know as `#N` with its wire type. Never a value.
//!
//! The fields are named from the `FileDescriptorSet` the proto crate
//! checks in beside its generated code
//! ([`holm_modal_proto::FILE_DESCRIPTOR_SET`]), decoded generically
//! (`prost-reflect`): one place for every RPC. The layer reads a request's
//! body whole before the service does (every RPC of the subset takes one
//! message; a client-streaming one, or one the subset lacks, passes
//! untouched with no body shape) and hands the trace to the service in the
//! request's extensions, where its gate (`admit`) puts it on the
//! [`Call`](crate::Call).

use std::future::Future;
use std::pin::Pin;
use std::sync::LazyLock;
use std::task::{Context, Poll};

use axum::http;
use http_body_util::BodyExt as _;
use prost_reflect::prost::encoding::WireType;
use prost_reflect::{DescriptorPool, DynamicMessage, MessageDescriptor, Value};
use tonic::body::Body;

use crate::trace::{Shape, Trace};

/// Metadata every gRPC client sends for the transport's sake (HTTP/2's
/// `te: trailers`, the message's content type, the encodings it accepts
/// and its own deadline), never part of Modal's contract: holm's client
/// (tonic) and Modal's (grpclib) both send them for their own reasons.
pub const TRANSPORT: &[&str] = &[
    "accept-encoding",
    "content-length",
    "content-type",
    "grpc-accept-encoding",
    "grpc-encoding",
    "grpc-timeout",
    "te",
    "user-agent",
];

/// The subset's descriptors.
static POOL: LazyLock<DescriptorPool> = LazyLock::new(|| {
    DescriptorPool::decode(holm_modal_proto::FILE_DESCRIPTOR_SET)
        .expect("holm-modal-proto's checked-in FileDescriptorSet decodes")
});

/// The request message of the gRPC method at `path`
/// (`/package.Service/Method`), when the subset has it and it takes one
/// message.
fn input(path: &str) -> Option<MessageDescriptor> {
    let (service, method) = path.strip_prefix('/')?.split_once('/')?;
    let method = POOL.get_service_by_name(service)?.methods().find(|m| m.name() == method)?;
    (!method.is_client_streaming()).then(|| method.input())
}

/// A set field's kind, as a trace names it.
pub fn kind(v: &Value) -> &'static str {
    match v {
        Value::Bool(_) => "bool",
        Value::I32(_) | Value::I64(_) | Value::U32(_) | Value::U64(_) => "int",
        Value::F32(_) | Value::F64(_) => "float",
        Value::String(_) => "string",
        Value::Bytes(_) => "bytes",
        Value::EnumNumber(_) => "enum",
        Value::Message(_) => "message",
        Value::List(_) => "repeated",
        Value::Map(_) => "map",
    }
}

fn wire(t: WireType) -> &'static str {
    match t {
        WireType::Varint => "varint",
        WireType::SixtyFourBit => "fixed64",
        WireType::LengthDelimited => "length-delimited",
        WireType::StartGroup | WireType::EndGroup => "group",
        WireType::ThirtyTwoBit => "fixed32",
    }
}

fn join(prefix: &str, name: &str) -> String {
    if prefix.is_empty() { name.to_owned() } else { format!("{prefix}.{name}") }
}

/// Adds the set fields of `m` under `prefix` to `out`.
pub fn shape_of(m: &DynamicMessage, prefix: &str, out: &mut Shape) {
    for (field, value) in m.fields() {
        let path = join(prefix, field.name());
        out.insert(path.clone(), kind(value));
        value_shape(value, &path, out);
    }
    for unknown in m.unknown_fields() {
        out.insert(join(prefix, &format!("#{}", unknown.number())), wire(unknown.wire_type()));
    }
}

/// Adds what is inside `v` (at `path`) to `out`.
fn value_shape(v: &Value, path: &str, out: &mut Shape) {
    match v {
        Value::Message(m) => shape_of(m, path, out),
        Value::List(items) => {
            let path = format!("{path}[]");
            for item in items {
                out.insert(path.clone(), kind(item));
                value_shape(item, &path, out);
            }
        }
        Value::Map(entries) => {
            let path = format!("{path}.*");
            for value in entries.values() {
                out.insert(path.clone(), kind(value));
                value_shape(value, &path, out);
            }
        }
        _ => {}
    }
}

/// The shape of a gRPC request body (its length-prefixed messages) of
/// type `desc`: a compressed or undecodable message shows as one field
/// saying so.
pub fn body_shape(desc: &MessageDescriptor, mut body: &[u8]) -> Shape {
    let mut out = Shape::new();
    while body.len() >= 5 {
        let compressed = body[0] != 0;
        let len = u32::from_be_bytes([body[1], body[2], body[3], body[4]]) as usize;
        let Some(message) = body.get(5..5 + len) else {
            out.insert("#truncated".into(), "bytes");
            break;
        };
        if compressed {
            out.insert("#compressed".into(), "bytes");
        } else {
            match DynamicMessage::decode(desc.clone(), message) {
                Ok(m) => shape_of(&m, "", &mut out),
                Err(_) => {
                    out.insert("#undecodable".into(), "bytes");
                }
            }
        }
        body = &body[5 + len..];
    }
    out
}

/// The contract part of `req`, and `req` back whole (its body read into
/// memory and put back when its method takes one message).
pub async fn observe(req: http::Request<Body>) -> (http::Request<Body>, Trace) {
    let path = req.uri().path().to_owned();
    let (agent, headers) = crate::trace::agent_and_headers(req.headers(), TRANSPORT);
    let mut trace = Trace { route: path.clone(), agent, headers, ..Trace::default() };
    let Some(desc) = input(&path) else { return (req, trace) };
    let (parts, body) = req.into_parts();
    let bytes = body.collect().await.map(|b| b.to_bytes()).unwrap_or_default();
    trace.body = body_shape(&desc, &bytes);
    (http::Request::from_parts(parts, Body::new(http_body_util::Full::new(bytes))), trace)
}

/// The layer that traces every call ([`observe`]).
#[derive(Debug, Clone, Copy, Default)]
pub struct TraceLayer;

impl<S> tower::Layer<S> for TraceLayer {
    type Service = Traced<S>;

    fn layer(&self, inner: S) -> Traced<S> {
        Traced(inner)
    }
}

/// A service whose requests carry their [`Trace`] in their extensions.
#[derive(Debug, Clone)]
pub struct Traced<S>(S);

type Boxed<T, E> = Pin<Box<dyn Future<Output = Result<T, E>> + Send>>;

impl<S> tower::Service<http::Request<Body>> for Traced<S>
where
    S: tower::Service<http::Request<Body>> + Clone + Send + 'static,
    S::Future: Send,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = Boxed<S::Response, S::Error>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.0.poll_ready(cx)
    }

    fn call(&mut self, req: http::Request<Body>) -> Self::Future {
        // The clone is ready only after its own poll_ready: call the
        // service that was polled and keep the clone for the next call.
        let clone = self.0.clone();
        let mut inner = std::mem::replace(&mut self.0, clone);
        Box::pin(async move {
            let (mut req, trace) = observe(req).await;
            req.extensions_mut().insert(trace);
            inner.call(req).await
        })
    }
}

#[cfg(test)]
mod tests {
    use holm_modal_proto::api;
    use prost_reflect::prost::Message as _;

    use super::*;

    fn framed(m: &impl prost_reflect::prost::Message) -> Vec<u8> {
        let bytes = m.encode_to_vec();
        let mut out = vec![0];
        out.extend_from_slice(&u32::try_from(bytes.len()).unwrap().to_be_bytes());
        out.extend_from_slice(&bytes);
        out
    }

    #[test]
    fn a_request_is_shaped_by_its_proto_names_and_no_value() {
        let m = api::SandboxCreateRequest {
            app_id: "ap-secretish".into(),
            tags: vec![api::SandboxTag { tag_name: "holm.box".into(), tag_value: "b-1".into() }],
            definition: Some(api::Sandbox {
                entrypoint_args: vec!["/holm-guest".into()],
                timeout_secs: 600,
                idle_timeout_secs: Some(0),
                resources: Some(api::Resources { milli_cpu: 2000, ..api::Resources::default() }),
                ..api::Sandbox::default()
            }),
            ..api::SandboxCreateRequest::default()
        };
        let desc = input("/modal.client.ModalClient/SandboxCreate").expect("a unary method");
        let shape = body_shape(&desc, &framed(&m));
        let got: Vec<(&str, &str)> = shape.iter().map(|(k, v)| (k.as_str(), *v)).collect();
        assert_eq!(
            got,
            [
                ("app_id", "string"),
                ("definition", "message"),
                ("definition.entrypoint_args", "repeated"),
                ("definition.entrypoint_args[]", "string"),
                // Explicit presence: a zero that was set is sent.
                ("definition.idle_timeout_secs", "int"),
                ("definition.resources", "message"),
                ("definition.resources.milli_cpu", "int"),
                ("definition.timeout_secs", "int"),
                ("tags", "repeated"),
                ("tags[]", "message"),
                ("tags[].tag_name", "string"),
                ("tags[].tag_value", "string"),
            ]
        );
    }

    #[test]
    fn a_map_is_one_field_and_an_unknown_field_is_named_by_number() {
        let m = api::SecretGetOrCreateRequest {
            env_dict: [("HOLM_SECRET".to_owned(), "s3cr3t".to_owned())].into(),
            ..api::SecretGetOrCreateRequest::default()
        };
        let mut bytes = m.encode_to_vec();
        // Field 999, varint 1: not in the subset.
        bytes.extend_from_slice(&[0xb8, 0x3e, 0x01]);
        let mut frame = vec![0];
        frame.extend_from_slice(&u32::try_from(bytes.len()).unwrap().to_be_bytes());
        frame.extend_from_slice(&bytes);
        let desc = input("/modal.client.ModalClient/SecretGetOrCreate").expect("a unary method");
        let shape = body_shape(&desc, &frame);
        let got: Vec<(&str, &str)> = shape.iter().map(|(k, v)| (k.as_str(), *v)).collect();
        assert_eq!(got, [("#999", "varint"), ("env_dict", "map"), ("env_dict.*", "string")]);
        let text = format!("{shape:?}");
        assert!(!text.contains("HOLM_SECRET") && !text.contains("s3cr3t"), "{text}");
    }

    #[test]
    fn every_method_of_both_services_is_found_and_unknown_ones_are_not() {
        for service in ["modal.client.ModalClient", "modal.task_command_router.TaskCommandRouter"] {
            let s = POOL.get_service_by_name(service).expect(service);
            for m in s.methods() {
                assert!(input(&format!("/{service}/{}", m.name())).is_some(), "{}", m.name());
            }
        }
        assert!(input("/modal.client.ModalClient/NoSuchMethod").is_none());
        assert!(input("/nothing").is_none());
    }
}
