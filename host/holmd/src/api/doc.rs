//! Routes and their documentation, declared once: [`Api`] registers each
//! handler with axum and records what it takes and answers, and
//! [`openapi`] turns the records into `/v1/openapi.json`. A route cannot be
//! served without being documented, nor documented without being served.

use axum::Router;
use axum::handler::Handler;
use axum::routing::{MethodRouter, delete, get, patch, post, put};
use schemars::generate::SchemaSettings;
use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde_json::{Map, Value, json};

type SchemaFn = fn(&mut SchemaGenerator) -> Schema;

fn schema_fn<T: JsonSchema>() -> SchemaFn {
    |g| g.subschema_for::<T>()
}

/// What a route's body is.
#[derive(Debug, Clone, Copy)]
enum Body {
    None,
    Json(SchemaFn),
    Bytes,
}

/// What a route answers.
#[derive(Debug, Clone, Copy)]
enum Answer {
    Json(SchemaFn),
    /// JSON, or an image when the request asked for a screenshot.
    JsonOrImage(SchemaFn),
    Image,
    Ndjson(SchemaFn),
    /// JSON page, or NDJSON with `follow=true`.
    JsonOrNdjson(SchemaFn, SchemaFn),
    Bytes,
    Empty,
}

/// The documentation of one route.
#[derive(Debug, Clone)]
pub struct Op {
    summary: &'static str,
    tag: &'static str,
    public: bool,
    query: Option<SchemaFn>,
    body: Body,
    answer: Answer,
    status: u16,
    pub(crate) method: &'static str,
    pub(crate) path: &'static str,
}

impl Op {
    /// A route that answers JSON of type `T`.
    pub fn json<T: JsonSchema>(tag: &'static str, summary: &'static str) -> Self {
        Self::new(tag, summary, Answer::Json(schema_fn::<T>()))
    }

    /// A route that answers a raw image.
    pub fn image(tag: &'static str, summary: &'static str) -> Self {
        Self::new(tag, summary, Answer::Image)
    }

    /// A route that answers JSON `T`, or an image when a screenshot is asked for.
    pub fn json_or_image<T: JsonSchema>(tag: &'static str, summary: &'static str) -> Self {
        Self::new(tag, summary, Answer::JsonOrImage(schema_fn::<T>()))
    }

    /// A route that answers NDJSON, one `T` a line.
    pub fn ndjson<T: JsonSchema>(tag: &'static str, summary: &'static str) -> Self {
        Self::new(tag, summary, Answer::Ndjson(schema_fn::<T>()))
    }

    /// A route that answers a JSON page `P`, or NDJSON lines of `T` when following.
    pub fn json_or_ndjson<P: JsonSchema, T: JsonSchema>(
        tag: &'static str,
        summary: &'static str,
    ) -> Self {
        Self::new(tag, summary, Answer::JsonOrNdjson(schema_fn::<P>(), schema_fn::<T>()))
    }

    /// A route that answers raw bytes.
    pub fn bytes(tag: &'static str, summary: &'static str) -> Self {
        Self::new(tag, summary, Answer::Bytes)
    }

    /// A route that answers nothing (204).
    pub fn empty(tag: &'static str, summary: &'static str) -> Self {
        let mut op = Self::new(tag, summary, Answer::Empty);
        op.status = 204;
        op
    }

    fn new(tag: &'static str, summary: &'static str, answer: Answer) -> Self {
        Self {
            summary,
            tag,
            public: false,
            query: None,
            body: Body::None,
            answer,
            status: 200,
            method: "",
            path: "",
        }
    }

    /// Takes a JSON body of type `T`.
    #[must_use]
    pub fn body<T: JsonSchema>(mut self) -> Self {
        self.body = Body::Json(schema_fn::<T>());
        self
    }

    /// Takes a raw body.
    #[must_use]
    pub fn raw_body(mut self) -> Self {
        self.body = Body::Bytes;
        self
    }

    /// Takes query parameters, the fields of `T`.
    #[must_use]
    pub fn query<T: JsonSchema>(mut self) -> Self {
        self.query = Some(|g| {
            // Query parameters are listed one by one, so inline the type.
            let mut inline = SchemaSettings::draft2020_12()
                .with(|s| s.inline_subschemas = true)
                .into_generator();
            let _ = g;
            inline.root_schema_for::<T>()
        });
        self
    }

    /// Whether the route needs no credential.
    pub fn is_public(&self) -> bool {
        self.public
    }

    /// The route's path.
    pub fn path(&self) -> &'static str {
        self.path
    }

    /// Answers with this status on success.
    #[must_use]
    pub fn status(mut self, status: u16) -> Self {
        self.status = status;
        self
    }

    /// Needs no credential.
    #[must_use]
    pub fn public(mut self) -> Self {
        self.public = true;
        self
    }
}

/// A router that documents every route it serves.
#[derive(Debug)]
pub struct Api<S> {
    router: Router<S>,
    ops: Vec<Op>,
}

impl<S: Clone + Send + Sync + 'static> Default for Api<S> {
    fn default() -> Self {
        Self { router: Router::new(), ops: Vec::new() }
    }
}

impl<S: Clone + Send + Sync + 'static> Api<S> {
    fn add(
        mut self,
        method: &'static str,
        path: &'static str,
        route: MethodRouter<S>,
        mut op: Op,
    ) -> Self {
        op.method = method;
        op.path = path;
        self.router = self.router.route(path, route);
        self.ops.push(op);
        self
    }

    /// Serves GET `path`.
    pub fn get<H: Handler<T, S>, T: 'static>(self, path: &'static str, h: H, op: Op) -> Self {
        self.add("get", path, get(h), op)
    }

    /// Serves POST `path`.
    pub fn post<H: Handler<T, S>, T: 'static>(self, path: &'static str, h: H, op: Op) -> Self {
        self.add("post", path, post(h), op)
    }

    /// Serves PUT `path`.
    pub fn put<H: Handler<T, S>, T: 'static>(self, path: &'static str, h: H, op: Op) -> Self {
        self.add("put", path, put(h), op)
    }

    /// Serves PATCH `path`.
    pub fn patch<H: Handler<T, S>, T: 'static>(self, path: &'static str, h: H, op: Op) -> Self {
        self.add("patch", path, patch(h), op)
    }

    /// Serves DELETE `path`.
    pub fn delete<H: Handler<T, S>, T: 'static>(self, path: &'static str, h: H, op: Op) -> Self {
        self.add("delete", path, delete(h), op)
    }

    /// The router and the route records.
    pub fn into_parts(self) -> (Router<S>, Vec<Op>) {
        (self.router, self.ops)
    }
}

/// The OpenAPI 3.1 document of `ops`.
pub fn openapi(ops: &[Op], version: &str) -> Value {
    let mut settings = SchemaSettings::draft2020_12();
    settings.definitions_path = "/components/schemas".into();
    let mut g = settings.into_generator();
    let mut paths = Map::new();
    let error = g.subschema_for::<holm_proto::ErrorBody>().to_value();
    for op in ops {
        let mut parameters: Vec<Value> = op
            .path
            .split('/')
            .filter_map(|seg| seg.strip_prefix('{').and_then(|s| s.strip_suffix('}')))
            .map(|name| json!({"name": name, "in": "path", "required": true, "schema": {"type": "string"}}))
            .collect();
        if let Some(query) = op.query {
            let schema = query(&mut g).to_value();
            let required: Vec<&str> = schema
                .get("required")
                .and_then(Value::as_array)
                .map(|a| a.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            if let Some(props) = schema.get("properties").and_then(Value::as_object) {
                for (name, prop) in props {
                    let mut prop = prop.clone();
                    let description = prop.as_object_mut().and_then(|o| o.remove("description"));
                    parameters.push(json!({
                        "name": name, "in": "query", "required": required.contains(&name.as_str()),
                        "description": description, "schema": prop,
                    }));
                }
            }
        }
        let mut operation = json!({
            "summary": op.summary,
            "tags": [op.tag],
            "operationId": format!("{}_{}", op.method, op.path.trim_start_matches("/v1/").replace(['/', '{', '}'], "_")),
            "parameters": parameters,
        });
        match op.body {
            Body::None => {}
            Body::Json(f) => {
                operation["requestBody"] = json!({"required": true, "content": {"application/json": {"schema": f(&mut g).to_value()}}});
            }
            Body::Bytes => {
                operation["requestBody"] = json!({"required": true, "content": {"application/octet-stream": {"schema": {}}}});
            }
        }
        let image = json!({"image/png": {}, "image/jpeg": {}, "image/webp": {}});
        let content = match op.answer {
            Answer::Json(f) => json!({"application/json": {"schema": f(&mut g).to_value()}}),
            Answer::JsonOrImage(f) => {
                let mut c = image.clone();
                c["application/json"] = json!({"schema": f(&mut g).to_value()});
                c
            }
            Answer::Image => image,
            Answer::Ndjson(f) => json!({"application/x-ndjson": {"schema": f(&mut g).to_value()}}),
            Answer::JsonOrNdjson(p, t) => json!({
                "application/json": {"schema": p(&mut g).to_value()},
                "application/x-ndjson": {"schema": t(&mut g).to_value()},
            }),
            Answer::Bytes => json!({"application/octet-stream": {}}),
            Answer::Empty => Value::Null,
        };
        let mut ok = json!({"description": "success"});
        if !content.is_null() {
            ok["content"] = content;
        }
        let mut responses = Map::new();
        responses.insert(op.status.to_string(), ok);
        responses.insert(
            "default".into(),
            json!({"description": "an error in the one shape", "content": {"application/json": {"schema": error.clone()}}}),
        );
        operation["responses"] = Value::Object(responses);
        if op.public {
            operation["security"] = json!([]);
        }
        let entry = paths.entry(op.path.to_owned()).or_insert_with(|| json!({}));
        entry[op.method] = operation;
    }
    json!({
        "openapi": "3.1.0",
        "info": {
            "title": "holmd",
            "version": version,
            "description": "Boxes: Linux desktops for AI agents, on every runtime. Every error has one shape: \
                {\"error\": {\"code\", \"message\", \"hint\", \"details\", \"request_id\"}}."
        },
        "paths": paths,
        "components": {
            "schemas": g.take_definitions(true),
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
        },
        "security": [{"bearer": []}],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refs<'a>(v: &'a Value, out: &mut Vec<&'a str>) {
        match v {
            Value::Object(map) => {
                if let Some(Value::String(r)) = map.get("$ref") {
                    out.push(r);
                }
                map.values().for_each(|v| refs(v, out));
            }
            Value::Array(items) => items.iter().for_each(|v| refs(v, out)),
            _ => {}
        }
    }

    #[test]
    fn every_route_is_documented_and_every_reference_resolves() {
        let (_, ops) = crate::api::routes().into_parts();
        let doc = openapi(&ops, "test");
        assert_eq!(doc["openapi"], "3.1.0");
        let paths = doc["paths"].as_object().unwrap();
        for op in &ops {
            let entry = &paths[op.path][op.method];
            assert!(entry["responses"].is_object(), "{} {} has no responses", op.method, op.path);
            assert!(entry["summary"].as_str().is_some_and(|s| !s.is_empty()));
        }
        let mut all = Vec::new();
        refs(&doc, &mut all);
        assert!(!all.is_empty());
        for r in all {
            let pointer = r.strip_prefix('#').expect("local reference");
            assert!(doc.pointer(pointer).is_some(), "{r} does not resolve");
        }
        let ids: std::collections::HashSet<&str> = paths
            .values()
            .flat_map(|p| p.as_object().unwrap().values())
            .map(|o| o["operationId"].as_str().unwrap())
            .collect();
        assert_eq!(ids.len(), ops.len(), "operation ids must be unique");
    }

    #[test]
    fn query_types_become_parameters() {
        let (_, ops) = crate::api::routes().into_parts();
        let doc = openapi(&ops, "test");
        let params =
            doc["paths"]["/v1/boxes/{id}/screens/{screen}/screenshot"]["get"]["parameters"]
                .as_array()
                .unwrap();
        let names: Vec<&str> = params.iter().map(|p| p["name"].as_str().unwrap()).collect();
        for want in ["id", "screen", "format", "region", "max_width", "cursor"] {
            assert!(names.contains(&want), "{want} missing from {names:?}");
        }
        assert_eq!(doc["paths"]["/v1/health"]["get"]["security"], serde_json::json!([]));
    }
}
