//! The API contract, declared once: what each route takes and answers
//! ([`Op`]), the guest's every route ([`GUEST_ROUTES`], with how holmd
//! reaches it), the OpenAPI document made from such records ([`openapi`]),
//! and typed calls ([`Call`]) whose request and answer types are the ones
//! the records document.
//!
//! The guest serves exactly [`GUEST_ROUTES`] (its router is built from
//! them), holmd forwards and documents each one marked
//! [`Holmd::Forward`] from the same record, and `holm-client`'s generic
//! call takes a [`Call`]. holmd's own routes are [`server::SERVER_ROUTES`],
//! typed as [`server::ServerCall`]s that holmd registers and documents and
//! `holm-client`'s `Client` calls: a route's path, method and types are
//! spelled here and nowhere else.

mod guest;
pub mod server;
mod step;

use std::marker::PhantomData;

use schemars::generate::SchemaSettings;
use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde_json::{Map, Value, json};

pub use self::guest::*;
pub use self::step::{Params, Step};

/// Makes the JSON schema of a type.
pub type SchemaFn = fn(&mut SchemaGenerator) -> Schema;

fn schema_of<T: JsonSchema>(g: &mut SchemaGenerator) -> Schema {
    g.subschema_for::<T>()
}

/// Query parameters are listed one by one, so their type is inlined.
fn query_of<T: JsonSchema>(_: &mut SchemaGenerator) -> Schema {
    SchemaSettings::draft2020_12()
        .with(|s| s.inline_subschemas = true)
        .into_generator()
        .root_schema_for::<T>()
}

/// What a route's request body is.
#[derive(Debug, Clone, Copy)]
pub enum Body {
    /// No body.
    None,
    /// JSON of a type.
    Json(SchemaFn),
    /// Raw bytes.
    Bytes,
}

/// What a route answers.
#[derive(Debug, Clone, Copy)]
pub enum Answer {
    /// JSON of a type.
    Json(SchemaFn),
    /// JSON, or an image when the request asked for a screenshot.
    JsonOrImage(SchemaFn),
    /// A raw image.
    Image,
    /// NDJSON, one value of a type a line.
    Ndjson(SchemaFn),
    /// A JSON page, or NDJSON with `follow=true`.
    JsonOrNdjson(SchemaFn, SchemaFn),
    /// Raw bytes.
    Bytes,
    /// A video (`video/mp4`).
    Video,
    /// An HTML page, or NDJSON lines of a type, as the query asks.
    HtmlOrNdjson(SchemaFn),
    /// Nothing (204).
    Empty,
    /// A WebSocket (101) whose text frames from the server are of a type.
    WebSocket(SchemaFn),
}

/// The documentation of one route: what it takes and answers.
#[derive(Debug, Clone, Copy)]
pub struct Op {
    /// One line on what it does.
    pub summary: &'static str,
    /// Its group in the document.
    pub tag: &'static str,
    /// Whether it needs no credential.
    pub public: bool,
    /// Its query parameters, the fields of a type.
    pub query: Option<SchemaFn>,
    /// Its body.
    pub body: Body,
    /// Its answer.
    pub answer: Answer,
    /// The status of a success.
    pub status: u16,
    /// The name of the SDKs' method that is this one call (`x-holm-sdk`
    /// in holmd's document), which their generators make: for a route an
    /// SDK wraps as it is, with nothing of its own to add.
    pub sdk: Option<&'static str>,
}

impl Op {
    const fn new(tag: &'static str, summary: &'static str, answer: Answer) -> Self {
        let status = match answer {
            Answer::Empty => 204,
            Answer::WebSocket(_) => 101,
            _ => 200,
        };
        Self {
            summary,
            tag,
            public: false,
            query: None,
            body: Body::None,
            answer,
            status,
            sdk: None,
        }
    }

    /// A route that answers JSON of type `T`.
    pub const fn json<T: JsonSchema>(tag: &'static str, summary: &'static str) -> Self {
        Self::new(tag, summary, Answer::Json(schema_of::<T>))
    }

    /// A route that answers a raw image.
    pub const fn image(tag: &'static str, summary: &'static str) -> Self {
        Self::new(tag, summary, Answer::Image)
    }

    /// A route that answers JSON `T`, or an image when a screenshot is asked for.
    pub const fn json_or_image<T: JsonSchema>(tag: &'static str, summary: &'static str) -> Self {
        Self::new(tag, summary, Answer::JsonOrImage(schema_of::<T>))
    }

    /// A route that answers NDJSON, one `T` a line.
    pub const fn ndjson<T: JsonSchema>(tag: &'static str, summary: &'static str) -> Self {
        Self::new(tag, summary, Answer::Ndjson(schema_of::<T>))
    }

    /// A route that answers a JSON page `P`, or NDJSON lines of `T` when following.
    pub const fn json_or_ndjson<P: JsonSchema, T: JsonSchema>(
        tag: &'static str,
        summary: &'static str,
    ) -> Self {
        Self::new(tag, summary, Answer::JsonOrNdjson(schema_of::<P>, schema_of::<T>))
    }

    /// A route that answers raw bytes.
    pub const fn bytes(tag: &'static str, summary: &'static str) -> Self {
        Self::new(tag, summary, Answer::Bytes)
    }

    /// A route that answers a video (`video/mp4`).
    pub const fn video(tag: &'static str, summary: &'static str) -> Self {
        Self::new(tag, summary, Answer::Video)
    }

    /// A route that answers an HTML page, or NDJSON lines of `T`.
    pub const fn html_or_ndjson<T: JsonSchema>(tag: &'static str, summary: &'static str) -> Self {
        Self::new(tag, summary, Answer::HtmlOrNdjson(schema_of::<T>))
    }

    /// A route that switches to a WebSocket (101) whose text frames from
    /// the server are `T`.
    pub const fn websocket<T: JsonSchema>(tag: &'static str, summary: &'static str) -> Self {
        Self::new(tag, summary, Answer::WebSocket(schema_of::<T>))
    }

    /// A route that answers nothing (204).
    pub const fn empty(tag: &'static str, summary: &'static str) -> Self {
        Self::new(tag, summary, Answer::Empty)
    }

    /// Takes a JSON body of type `T`.
    #[must_use]
    pub const fn body<T: JsonSchema>(mut self) -> Self {
        self.body = Body::Json(schema_of::<T>);
        self
    }

    /// Takes a raw body.
    #[must_use]
    pub const fn raw_body(mut self) -> Self {
        self.body = Body::Bytes;
        self
    }

    /// Takes query parameters, the fields of `T`.
    #[must_use]
    pub const fn query<T: JsonSchema>(mut self) -> Self {
        self.query = Some(query_of::<T>);
        self
    }

    /// Is the SDKs' method `name`, made by their generators ([`Op::sdk`]).
    #[must_use]
    pub const fn sdk(mut self, name: &'static str) -> Self {
        self.sdk = Some(name);
        self
    }

    /// Answers with this status on success.
    #[must_use]
    pub const fn status(mut self, status: u16) -> Self {
        self.status = status;
        self
    }

    /// Needs no credential.
    #[must_use]
    pub const fn public(mut self) -> Self {
        self.public = true;
        self
    }
}

/// An HTTP method, as OpenAPI spells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Method {
    /// GET.
    Get,
    /// POST.
    Post,
    /// PUT.
    Put,
    /// PATCH.
    Patch,
    /// DELETE.
    Delete,
}

impl Method {
    /// Lower case, as in an OpenAPI document.
    pub const fn lower(self) -> &'static str {
        match self {
            Self::Get => "get",
            Self::Post => "post",
            Self::Put => "put",
            Self::Patch => "patch",
            Self::Delete => "delete",
        }
    }

    /// Upper case, as on the wire.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Get => "GET",
            Self::Post => "POST",
            Self::Put => "PUT",
            Self::Patch => "PATCH",
            Self::Delete => "DELETE",
        }
    }

    /// The method named `name` (any case).
    pub fn parse(name: &str) -> Option<Self> {
        [Self::Get, Self::Post, Self::Put, Self::Patch, Self::Delete]
            .into_iter()
            .find(|m| m.as_str().eq_ignore_ascii_case(name))
    }
}

impl std::fmt::Display for Method {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One documented route: where it is and what it takes and answers.
#[derive(Debug, Clone)]
pub struct Documented {
    /// Its method.
    pub method: Method,
    /// Its path, with `{name}` parameters.
    pub path: String,
    /// What it takes and answers.
    pub op: Op,
}

/// Whether `path` (with `{name}` parameters) matches the concrete `actual`.
pub fn path_matches(path: &str, actual: &str) -> bool {
    let (mut want, mut got) = (path.split('/'), actual.split('/'));
    loop {
        match (want.next(), got.next()) {
            (None, None) => return true,
            (Some(w), Some(g)) => {
                let param = w.starts_with('{') && w.ends_with('}');
                if (param && g.is_empty()) || (!param && w != g) {
                    return false;
                }
            }
            _ => return false,
        }
    }
}

/// A typed call of a JSON route: its query is the fields of `Q` (`()`
/// for none), its request body `Req` (`()` for none) and its answer `Resp`
/// (`()` for nothing). The route's record is made from these types, so
/// what is documented, forwarded and called agree.
#[derive(Debug)]
pub struct Call<Req, Resp, Q = ()> {
    /// The route.
    pub route: GuestRoute,
    types: PhantomData<fn(Q, Req) -> Resp>,
}

impl<Req, Resp, Q> Call<Req, Resp, Q> {
    const fn of(route: GuestRoute) -> Self {
        Self { route, types: PhantomData }
    }

    /// Only watches the box (see [`GuestRoute::watches`]).
    #[must_use]
    pub const fn watches(mut self) -> Self {
        self.route.watches = true;
        self
    }

    /// Is a stream (see [`GuestRoute::stream`]).
    #[must_use]
    pub const fn stream(mut self) -> Self {
        self.route.stream = true;
        self
    }

    /// Needs no credential.
    #[must_use]
    pub const fn public(mut self) -> Self {
        self.route.op = self.route.op.public();
        self
    }

    /// The server's alone, for the reason given (see [`Holmd::Internal`]).
    #[must_use]
    pub const fn internal(mut self, why: &'static str) -> Self {
        self.route = self.route.internal(why);
        self
    }

    /// Arrived in guest protocol generation `generation` (see
    /// [`GuestRoute::since`]).
    #[must_use]
    pub const fn since(mut self, generation: u32) -> Self {
        self.route = self.route.since(generation);
        self
    }

    /// Answered by holmd's route `route` (see [`Holmd::Own`]).
    #[must_use]
    pub const fn own(mut self, route: &'static str) -> Self {
        self.route = self.route.own(route);
        self
    }

    /// Is a step of the box's timeline (see [`GuestRoute::step`]).
    #[must_use]
    pub const fn step(mut self, step: Step) -> Self {
        self.route = self.route.step(step);
        self
    }
}

impl<Req, Resp> Call<Req, Resp> {
    /// Takes query parameters, the fields of `T`.
    #[must_use]
    pub const fn query<T: JsonSchema>(self) -> Call<Req, Resp, T> {
        let mut route = self.route;
        route.op = route.op.query::<T>();
        Call::of(route)
    }
}

impl<Resp: JsonSchema> Call<(), Resp> {
    /// A GET answering JSON `Resp`.
    pub const fn get(path: &'static str, tag: &'static str, summary: &'static str) -> Self {
        Self::of(GuestRoute::new(Method::Get, path, Op::json::<Resp>(tag, summary)))
    }

    /// A DELETE answering JSON `Resp`.
    pub const fn delete(path: &'static str, tag: &'static str, summary: &'static str) -> Self {
        Self::of(GuestRoute::new(Method::Delete, path, Op::json::<Resp>(tag, summary)))
    }
}

impl<Req: JsonSchema, Resp: JsonSchema> Call<Req, Resp> {
    /// A POST of JSON `Req` answering JSON `Resp`.
    pub const fn post(path: &'static str, tag: &'static str, summary: &'static str) -> Self {
        let op = Op::json::<Resp>(tag, summary).body::<Req>();
        Self::of(GuestRoute::new(Method::Post, path, op))
    }

    /// A PUT of JSON `Req` answering JSON `Resp`.
    pub const fn put(path: &'static str, tag: &'static str, summary: &'static str) -> Self {
        let op = Op::json::<Resp>(tag, summary).body::<Req>();
        Self::of(GuestRoute::new(Method::Put, path, op))
    }
}

impl Call<(), ()> {
    /// A `method` without a body, answering nothing (204).
    pub const fn bare(
        method: Method,
        path: &'static str,
        tag: &'static str,
        summary: &'static str,
    ) -> Self {
        Self::of(GuestRoute::new(method, path, Op::empty(tag, summary)))
    }
}

impl<Req: JsonSchema> Call<Req, ()> {
    /// A `method` of JSON `Req`, answering nothing (204).
    pub const fn told(
        method: Method,
        path: &'static str,
        tag: &'static str,
        summary: &'static str,
    ) -> Self {
        Self::of(GuestRoute::new(method, path, Op::empty(tag, summary).body::<Req>()))
    }
}

/// The OpenAPI 3.1 document of the guest's API ([`GUEST_ROUTES`]), which
/// the guest serves at `/v1/openapi.json`.
pub fn guest_openapi(version: &str) -> Value {
    let routes: Vec<Documented> = GUEST_ROUTES
        .iter()
        .map(|r| Documented { method: r.method, path: r.path.to_owned(), op: r.op })
        .collect();
    openapi(
        &routes,
        "holm-guest",
        version,
        "The agent inside every box: its desktop, commands, files, browser and viewers. \
         Every route but /health needs the box's credential as a bearer token; every error has \
         one shape: {\"error\": {\"code\", \"message\", \"hint\", \"details\", \"request_id\"}}.",
    )
}

/// The OpenAPI 3.1 document of `routes`, titled `title`.
pub fn openapi(routes: &[Documented], title: &str, version: &str, description: &str) -> Value {
    let mut settings = SchemaSettings::draft2020_12();
    settings.definitions_path = "/components/schemas".into();
    let mut g = settings.into_generator();
    let mut paths = Map::new();
    let error = g.subschema_for::<crate::ErrorBody>().to_value();
    for route in routes {
        let operation = operation(route, &mut g, &error);
        let entry = paths.entry(route.path.clone()).or_insert_with(|| json!({}));
        entry[route.method.lower()] = operation;
    }
    json!({
        "openapi": "3.1.0",
        "info": {"title": title, "version": version, "description": description},
        "paths": paths,
        "components": {
            "schemas": g.take_definitions(true),
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
        },
        "security": [{"bearer": []}],
    })
}

fn operation(route: &Documented, g: &mut SchemaGenerator, error: &Value) -> Value {
    let op = &route.op;
    let mut parameters: Vec<Value> = route
        .path
        .split('/')
        .filter_map(|seg| seg.strip_prefix('{').and_then(|s| s.strip_suffix('}')))
        .map(|name| json!({"name": name, "in": "path", "required": true, "schema": {"type": "string"}}))
        .collect();
    if let Some(query) = op.query {
        parameters.extend(query_parameters(&query(g).to_value()));
    }
    let id =
        route.path.trim_start_matches('/').trim_start_matches("v1/").replace(['/', '{', '}'], "_");
    let mut operation = json!({
        "summary": op.summary,
        "tags": [op.tag],
        "operationId": format!("{}_{id}", route.method.lower()),
        "parameters": parameters,
    });
    match op.body {
        Body::None => {}
        Body::Json(f) => {
            operation["requestBody"] = json!({"required": true, "content": {"application/json": {"schema": f(g).to_value()}}});
        }
        Body::Bytes => {
            operation["requestBody"] =
                json!({"required": true, "content": {"application/octet-stream": {"schema": {}}}});
        }
    }
    let mut ok = json!({"description": "success"});
    if let Some(content) = answer_content(op.answer, g) {
        ok["content"] = content;
    }
    let mut responses = Map::new();
    responses.insert(op.status.to_string(), ok);
    responses.insert(
        "default".into(),
        json!({"description": "an error in the one shape", "content": {"application/json": {"schema": error}}}),
    );
    operation["responses"] = Value::Object(responses);
    if op.public {
        operation["security"] = json!([]);
    }
    if let Some(name) = op.sdk {
        operation["x-holm-sdk"] = json!(name);
    }
    operation
}

fn query_parameters(schema: &Value) -> Vec<Value> {
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let Some(props) = schema.get("properties").and_then(Value::as_object) else {
        return Vec::new();
    };
    props
        .iter()
        .map(|(name, prop)| {
            let mut prop = prop.clone();
            let description = prop.as_object_mut().and_then(|o| o.remove("description"));
            json!({
                "name": name, "in": "query", "required": required.contains(&name.as_str()),
                "description": description, "schema": prop,
            })
        })
        .collect()
}

fn answer_content(answer: Answer, g: &mut SchemaGenerator) -> Option<Value> {
    let image = json!({"image/png": {}, "image/jpeg": {}, "image/webp": {}});
    Some(match answer {
        Answer::Json(f) => json!({"application/json": {"schema": f(g).to_value()}}),
        Answer::JsonOrImage(f) => {
            let mut c = image;
            c["application/json"] = json!({"schema": f(g).to_value()});
            c
        }
        Answer::Image => image,
        Answer::Ndjson(f) => json!({"application/x-ndjson": {"schema": f(g).to_value()}}),
        Answer::JsonOrNdjson(p, t) => json!({
            "application/json": {"schema": p(g).to_value()},
            "application/x-ndjson": {"schema": t(g).to_value()},
        }),
        Answer::Bytes => json!({"application/octet-stream": {}}),
        Answer::Video => json!({"video/mp4": {}}),
        Answer::HtmlOrNdjson(f) => json!({
            "text/html": {"schema": {"type": "string"}},
            "application/x-ndjson": {"schema": f(g).to_value()},
        }),
        Answer::Empty => return None,
        Answer::WebSocket(f) => {
            json!({"application/json": {"schema": f(g).to_value(), "x-websocket-text-frames": true}})
        }
    })
}
