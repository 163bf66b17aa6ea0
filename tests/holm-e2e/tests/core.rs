//! The shared box suite: what every box does, written once and run on every
//! runtime and display profile (see `holm_testkit::matrix`). One box per
//! target goes through it all, in order: made with memory and CPUs and
//! marked by labels, published on loopback only, on the profile asked for;
//! a screenshot; commands and files; clicks and Unicode typing into real
//! terminals; the bridge and a page tool; pause and resume with a process's
//! memory kept; a fork with its own secret; stop and start with the files
//! kept and a new desktop; removal. A step the runtime cannot do (its
//! `can`) is checked to be refused before anything changes.

mod box_life;

use box_life::a_box_lives_its_whole_life;

// Both container engines on both profiles, gVisor too (docs/design/testing.md,
// "which behaviours run where"). podman 4.3 runs containers made through
// its API on its service's default OCI runtime only, so podman under gVisor
// needs a service of its own (docs/runtimes.md) and is not a target here.
// E2B, Daytona, Modal, Runtime Cloud and Vercel through their stand-ins (X11, the
// one profile the vendors' runtimes offer): each sandbox a container on the
// local engine, reached only through the vendor's proxy. Kubernetes in both
// modes (plain pods; agent-sandbox's claims on a warm pool) on both
// profiles, through a Kubernetes API stand-in whose pods are containers on
// the local engine at loopback addresses of their own.
holm_testkit::suite!(a_box_lives_its_whole_life:
    docker [x11, wayland],
    podman [x11, wayland],
    docker_runsc [x11, wayland],
    e2b [x11],
    daytona [x11],
    modal [x11],
    runtime_cloud [x11],
    vercel [x11],
    kubernetes [x11, wayland],
    kubernetes_claims [x11, wayland],
);
