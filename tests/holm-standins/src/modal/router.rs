//! `modal.task_command_router.TaskCommandRouter`, as the stand-in answers
//! it: commands run in the sandbox's container (`docker exec`), their
//! output kept and read from an offset, an `exec_id` started once.

use std::sync::{Arc, Mutex};

use base64::Engine as _;
use holm_modal_proto::router::{
    self as r, task_command_router_server::TaskCommandRouter, task_exec_poll_response,
    task_exec_wait_response,
};
use tonic::{Request, Response, Status};

use super::{Exec, State};
use crate::common::{Call, token};

/// The service.
#[derive(Debug)]
pub(crate) struct Router(pub Arc<State>);

type R<T> = Result<Response<T>, Status>;

/// A JWT for `task` that expires in an hour (the router checks only that
/// it is one the stand-in gave).
pub(crate) fn jwt(state: &State, task: &str) -> String {
    let b64 = |v: &serde_json::Value| {
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v.to_string())
    };
    let header = b64(&serde_json::json!({ "alg": "HS256", "typ": "JWT" }));
    let claims = b64(&serde_json::json!({ "sub": task, "exp": state.clock.now() + 3600 }));
    let jwt = format!("{header}.{claims}.{}", token());
    state.lock().jwts.insert(jwt.clone(), task.to_owned());
    jwt
}

impl Router {
    fn admit<T>(&self, rpc: &str, req: &Request<T>) -> Result<(), Status> {
        let path = format!("/modal.task_command_router.TaskCommandRouter/{rpc}");
        let bearer = req
            .metadata()
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
            .unwrap_or_default();
        let ok = self.0.lock().jwts.contains_key(bearer);
        let refused = if ok {
            self.0.faults.take("POST", &path).map(|f| super::api::fault_status(f.status))
        } else {
            Some(Status::unauthenticated("missing or invalid command router token"))
        };
        self.0.calls.push(Call {
            method: "POST".into(),
            path,
            status: if refused.is_some() { 401 } else { 200 },
            trace: req.extensions().get::<crate::trace::Trace>().cloned(),
        });
        refused.map_or(Ok(()), Err)
    }

    fn container(&self, task: &str) -> Result<String, Status> {
        self.0
            .lock()
            .sandboxes
            .values()
            .find(|s| s.task_id.as_deref() == Some(task) && s.result.is_none())
            .and_then(|s| s.container.clone())
            .ok_or_else(|| Status::not_found(format!("Task {task} not found")))
    }

    fn exec(&self, task: &str, exec: &str) -> Result<Arc<Mutex<Exec>>, Status> {
        self.0
            .lock()
            .execs
            .get(&(task.to_owned(), exec.to_owned()))
            .cloned()
            .ok_or_else(|| Status::not_found(format!("Exec {exec} not found")))
    }

    async fn wait_done(&self, e: &Arc<Mutex<Exec>>) -> i32 {
        loop {
            if let Some(c) = e.lock().unwrap_or_else(|x| x.into_inner()).code {
                return c;
            }
            let _ = tokio::time::timeout(
                std::time::Duration::from_millis(100),
                self.0.changed.notified(),
            )
            .await;
        }
    }
}

type ReadStream =
    tokio_stream::wrappers::ReceiverStream<Result<r::TaskExecStdioReadResponse, Status>>;

#[tonic::async_trait]
impl TaskCommandRouter for Router {
    async fn sandbox_wait_until_ready(
        &self,
        req: Request<r::SandboxWaitUntilReadyTcrRequest>,
    ) -> R<r::SandboxWaitUntilReadyTcrResponse> {
        self.admit("SandboxWaitUntilReady", &req)?;
        self.container(&req.into_inner().task_id)?;
        Ok(Response::new(r::SandboxWaitUntilReadyTcrResponse {
            ready_at: self.0.clock.now() as f64,
        }))
    }

    async fn task_exec_start(
        &self,
        req: Request<r::TaskExecStartRequest>,
    ) -> R<r::TaskExecStartResponse> {
        self.admit("TaskExecStart", &req)?;
        let m = req.into_inner();
        let container = self.container(&m.task_id)?;
        let key = (m.task_id.clone(), m.exec_id.clone());
        let exec = {
            let mut inner = self.0.lock();
            if inner.execs.contains_key(&key) {
                // The same exec_id again: started once.
                return Ok(Response::new(r::TaskExecStartResponse {}));
            }
            let e = Arc::new(Mutex::new(Exec::default()));
            inner.execs.insert(key, Arc::clone(&e));
            e
        };
        if m.command_args.is_empty() {
            return Err(Status::invalid_argument("command_args is empty"));
        }
        let state = Arc::clone(&self.0);
        let env: Vec<String> = m.env.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let task = tokio::spawn(async move {
            let ran = state
                .engine
                .exec(&container, m.command_args, env, None, m.workdir.as_deref())
                .await;
            {
                let mut e = exec.lock().unwrap_or_else(|x| x.into_inner());
                match ran {
                    Ok((code, out, err)) => {
                        e.stdout = out;
                        e.stderr = err;
                        e.code = Some(i32::try_from(code).unwrap_or(-1));
                    }
                    Err(why) => {
                        e.stderr = why.into_bytes();
                        e.code = Some(126);
                    }
                }
            }
            state.changed.notify_waiters();
        });
        self.0.spawn(task);
        Ok(Response::new(r::TaskExecStartResponse {}))
    }

    type TaskExecStdioReadStream = ReadStream;

    async fn task_exec_stdio_read(
        &self,
        req: Request<r::TaskExecStdioReadRequest>,
    ) -> R<ReadStream> {
        self.admit("TaskExecStdioRead", &req)?;
        let m = req.into_inner();
        let e = self.exec(&m.task_id, &m.exec_id)?;
        let (tx, rx) = tokio::sync::mpsc::channel(4);
        let me = Router(Arc::clone(&self.0));
        tokio::spawn(async move {
            me.wait_done(&e).await;
            let data = {
                let e = e.lock().unwrap_or_else(|x| x.into_inner());
                let all = if m.file_descriptor == r::TaskExecStdioFileDescriptor::Stderr as i32 {
                    &e.stderr
                } else {
                    &e.stdout
                };
                all.get(usize::try_from(m.offset).unwrap_or(usize::MAX)..)
                    .unwrap_or_default()
                    .to_vec()
            };
            for chunk in data.chunks(64 * 1024) {
                if tx.send(Ok(r::TaskExecStdioReadResponse { data: chunk.to_vec() })).await.is_err()
                {
                    return;
                }
            }
        });
        Ok(Response::new(tokio_stream::wrappers::ReceiverStream::new(rx)))
    }

    async fn task_exec_wait(
        &self,
        req: Request<r::TaskExecWaitRequest>,
    ) -> R<r::TaskExecWaitResponse> {
        self.admit("TaskExecWait", &req)?;
        let m = req.into_inner();
        let e = self.exec(&m.task_id, &m.exec_id)?;
        let code = self.wait_done(&e).await;
        Ok(Response::new(r::TaskExecWaitResponse {
            exit_status: Some(task_exec_wait_response::ExitStatus::Code(code)),
        }))
    }

    async fn task_exec_poll(
        &self,
        req: Request<r::TaskExecPollRequest>,
    ) -> R<r::TaskExecPollResponse> {
        self.admit("TaskExecPoll", &req)?;
        let m = req.into_inner();
        let e = self.exec(&m.task_id, &m.exec_id)?;
        let code = e.lock().unwrap_or_else(|x| x.into_inner()).code;
        Ok(Response::new(r::TaskExecPollResponse {
            exit_status: code.map(task_exec_poll_response::ExitStatus::Code),
        }))
    }

    async fn task_exec_stdin_write(
        &self,
        req: Request<r::TaskExecStdinWriteRequest>,
    ) -> R<r::TaskExecStdinWriteResponse> {
        self.admit("TaskExecStdinWrite", &req)?;
        let m = req.into_inner();
        self.exec(&m.task_id, &m.exec_id)?;
        // The stand-in's commands read no input: what is written is taken.
        Ok(Response::new(r::TaskExecStdinWriteResponse {}))
    }
}
