//! Boxes at cloud vendors, against their stand-ins ([`holm_standins`]): a
//! [`Cloud`] is a vendor; [`Cloud::server`] starts its stand-in and a holmd
//! whose runtimes file points the vendor's runtime at it, and adds the
//! runtime's key through the API, as the deploy guide does
//! (`holm runtime add`). Each stand-in sandbox is a real container on the
//! local engine running the real guest, reached only through the
//! stand-in's proxy.

use holm_proto::host::{AddRuntime, BoxState, CreateBox, Placement};
use holm_standins::Controls;
use holm_standins::daytona::DaytonaStandin;
use holm_standins::e2b::E2bStandin;
use holm_standins::modal::ModalStandin;
use holm_standins::runtime_cloud::RuntimeCloudStandin;
use holm_standins::vercel::VercelStandin;

use crate::TestServer;

/// A cloud vendor holm has a runtime for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cloud {
    /// E2B.
    E2b,
    /// Daytona.
    Daytona,
    /// Modal.
    Modal,
    /// Runtime Cloud.
    RuntimeCloud,
    /// Vercel Sandbox.
    Vercel,
}

/// A vendor's stand-in.
#[derive(Debug)]
pub enum Standin {
    /// E2B's.
    E2b(E2bStandin),
    /// Daytona's.
    Daytona(DaytonaStandin),
    /// Modal's.
    Modal(ModalStandin),
    /// Runtime Cloud's.
    RuntimeCloud(RuntimeCloudStandin),
    /// Vercel's.
    Vercel(VercelStandin),
}

impl Standin {
    /// Starts the stand-in of `cloud`.
    pub async fn start(cloud: Cloud) -> Self {
        match cloud {
            Cloud::E2b => Self::E2b(E2bStandin::start().await),
            Cloud::Daytona => Self::Daytona(DaytonaStandin::start().await),
            Cloud::Modal => Self::Modal(ModalStandin::start().await),
            Cloud::RuntimeCloud => Self::RuntimeCloud(RuntimeCloudStandin::start().await),
            Cloud::Vercel => Self::Vercel(VercelStandin::start().await),
        }
    }

    /// What the test controls of it: its key and keys, clock, injected
    /// failures, and the calls it answered.
    pub fn controls(&self) -> &Controls {
        match self {
            Self::E2b(s) => &s.controls,
            Self::Daytona(s) => &s.controls,
            Self::Modal(s) => &s.controls,
            Self::RuntimeCloud(s) => &s.controls,
            Self::Vercel(s) => &s.controls,
        }
    }

    /// A key it accepts.
    pub fn key(&self) -> &str {
        &self.controls().key
    }

    /// Whether sandbox `id` exists at the vendor.
    pub fn has_sandbox(&self, id: &str) -> bool {
        match self {
            Self::E2b(s) => s.has_sandbox(id),
            Self::Daytona(s) => s.has_sandbox(id),
            Self::Modal(s) => s.has_sandbox(id),
            Self::RuntimeCloud(s) => s.has_sandbox(id),
            Self::Vercel(s) => s.has_sandbox(id),
        }
    }

    /// Ends what is due at the vendor now.
    pub async fn reap_now(&self) {
        match self {
            Self::E2b(s) => s.reap_now().await,
            Self::Daytona(s) => s.reap_now().await,
            Self::Modal(s) => s.reap_now().await,
            Self::RuntimeCloud(s) => s.reap_now().await,
            Self::Vercel(s) => s.reap_now().await,
        }
    }

    /// The runtimes file table that points the vendor's runtime here. The
    /// stand-in and the endpoints it answers are on loopback, which a
    /// vendor's runtime reaches only when its table allows private
    /// addresses: it says so.
    pub fn runtimes_file(&self) -> String {
        format!("{}allow_private_addresses = true\n", self.runtimes_file_public_only())
    }

    /// The runtimes file table that points the vendor's runtime here,
    /// without allowing private addresses (every connection is refused).
    pub fn runtimes_file_public_only(&self) -> String {
        match self {
            Self::E2b(s) => {
                format!(
                    "[runtimes.e2b]\napi_url = \"{}\"\nsandbox_url = \"{}\"\n",
                    s.api_url, s.sandbox_url
                )
            }
            Self::Daytona(s) => format!("[runtimes.daytona]\napi_url = \"{}\"\n", s.api_url),
            Self::Modal(s) => format!("[runtimes.modal]\nserver_url = \"{}\"\n", s.server_url),
            Self::RuntimeCloud(s) => {
                format!("[runtimes.runtime-cloud]\napi_url = \"{}\"\n", s.api_url)
            }
            Self::Vercel(s) => format!(
                "[runtimes.vercel]\napi_url = \"{}\"\nregistry_url = \"{}\"\n",
                s.api_url, s.registry_url
            ),
        }
    }

    /// The fields the vendor's runtime is added with (besides its key).
    pub fn fields(&self) -> std::collections::BTreeMap<String, serde_json::Value> {
        match self {
            Self::Modal(s) => [("token_id".to_owned(), s.token_id.clone().into())].into(),
            Self::Vercel(s) => [
                ("team_id".to_owned(), s.team_id.clone().into()),
                ("project_id".to_owned(), s.project_id.clone().into()),
            ]
            .into(),
            Self::E2b(_) | Self::Daytona(_) | Self::RuntimeCloud(_) => Default::default(),
        }
    }

    /// The vendor's own variables for its SDK and the examples, and the
    /// one that lets holm's vendor accounts from the environment reach the
    /// stand-in on loopback.
    pub fn env(&self) -> Vec<(String, String)> {
        let mut env = self.vendor_env();
        env.push((holm::runtime::remote::ALLOW_PRIVATE_ENV.into(), "1".into()));
        env
    }

    fn vendor_env(&self) -> Vec<(String, String)> {
        match self {
            Self::E2b(s) => vec![
                ("E2B_API_KEY".into(), s.key.clone()),
                ("E2B_API_URL".into(), s.api_url.clone()),
                ("E2B_SANDBOX_URL".into(), s.sandbox_url.clone()),
            ],
            Self::Daytona(s) => vec![
                ("DAYTONA_API_KEY".into(), s.key.clone()),
                ("DAYTONA_API_URL".into(), s.api_url.clone()),
            ],
            Self::Modal(s) => vec![
                ("MODAL_TOKEN_ID".into(), s.token_id.clone()),
                ("MODAL_TOKEN_SECRET".into(), s.key.clone()),
                ("MODAL_SERVER_URL".into(), s.server_url.clone()),
            ],
            Self::RuntimeCloud(s) => vec![
                ("RUNTIME_API_KEY".into(), s.key.clone()),
                ("RUNTIME_API_URL".into(), s.api_url.clone()),
            ],
            Self::Vercel(s) => vec![
                ("VERCEL_TOKEN".into(), s.key.clone()),
                ("VERCEL_TEAM_ID".into(), s.team_id.clone()),
                ("VERCEL_PROJECT_ID".into(), s.project_id.clone()),
                ("VERCEL_API_URL".into(), s.api_url.clone()),
                ("VERCEL_REGISTRY_URL".into(), s.registry_url.clone()),
            ],
        }
    }
}

/// A holmd with a vendor's runtime, and the vendor's stand-in.
#[derive(Debug)]
pub struct CloudServer {
    /// The server; its runtime named after the vendor is the stand-in's.
    pub server: TestServer,
    /// The stand-in.
    pub standin: Standin,
    /// The vendor.
    pub cloud: Cloud,
}

impl Cloud {
    /// The vendor's provider name, which is also its runtime's name here.
    pub fn name(self) -> &'static str {
        match self {
            Self::E2b => "e2b",
            Self::Daytona => "daytona",
            Self::Modal => "modal",
            Self::RuntimeCloud => "runtime-cloud",
            Self::Vercel => "vercel",
        }
    }

    /// Starts the stand-in and a server whose runtimes file points the
    /// vendor's runtime at it, with a server key to seal vendor keys, and
    /// adds the runtime with the stand-in's key through the API.
    pub async fn server(self) -> CloudServer {
        let standin = Standin::start(self).await;
        let dir = tempfile::tempdir().expect("tempdir");
        let file = dir.path().join("runtimes.toml");
        std::fs::write(&file, standin.runtimes_file()).expect("write the runtimes file");
        let mut server = TestServer::start_without_image(move |c| {
            c.config_file = Some(file);
            c.secret_key = Some(holm::ids::new_secret() + &holm::ids::new_secret());
        })
        .await;
        server.keep(dir);
        server.remember("the vendor key", standin.key());
        let add = AddRuntime {
            name: self.name().into(),
            provider: self.name().into(),
            fields: standin.fields(),
            api_key: Some(standin.key().to_owned()),
        };
        let info = server.client.add_runtime(&add).await.expect("add the vendor's runtime");
        assert_eq!(info.state, holm_proto::host::RuntimeState::Available, "{info:?}");
        CloudServer { server, standin, cloud: self }
    }
}

impl CloudServer {
    /// A request for a box on the vendor's runtime.
    pub fn request(&self) -> CreateBox {
        CreateBox {
            placement: Placement {
                runtime: Some(self.cloud.name().into()),
                ..Placement::default()
            },
            ..CreateBox::default()
        }
    }

    /// Makes a box on the vendor and waits until it runs; answers its id.
    pub async fn new_box(&self) -> String {
        let info =
            self.server.client.create_box(&self.request(), Some(900)).await.expect("create a box");
        assert_eq!(info.state, BoxState::Running, "{info:?}");
        assert_eq!(info.runtime, self.cloud.name());
        info.id
    }

    /// The vendor's sandbox of a box, from the server's record.
    pub async fn sandbox_of(&self, box_id: &str) -> String {
        let entry = self.server.service.get(box_id).expect("the box's record");
        entry.record().machine_id.expect("the box has a sandbox")
    }
}
