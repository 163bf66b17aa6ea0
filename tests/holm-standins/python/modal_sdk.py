"""Modal's own Python client (pinned in requirements.txt) against holm's
Modal stand-in, unchanged but for its address (MODAL_SERVER_URL,
MODAL_TOKEN_ID and MODAL_TOKEN_SECRET in the environment; the image's base
is HOLM_BASE_IMAGE, which the local engine has). Each check prints a line;
any failure raises and exits non-zero.

It makes the calls holm's Modal runtime makes, with the options holm sets,
so that the contract trace (holm-e2e's vendors.rs) compares their fields:
a hello, an image from Dockerfile lines whose COPY'd file (over 4 MiB, as holm's
guest is) goes in the build's context mount through blob storage; a
sandbox with an environment (an ephemeral Secret), tags, an idle timeout,
a timeout, whole CPUs and memory, and an encrypted port; its tunnels, a
command through the command router, its state, its tags, the list by tag,
and terminate."""

import os
import shutil
import tempfile

import modal
from modal.exception import AuthError

modal.Client.from_env().hello()
print("hello", "the token is taken")

app = modal.App.lookup("holm-sdk-check", create_if_missing=True)
print("app", app.app_id)

context = tempfile.mkdtemp()
with open(os.path.join(context, "holm-guest"), "wb") as f:
    f.write(os.urandom(5 * 1024 * 1024))
with open(os.path.join(context, "Dockerfile"), "w") as f:
    f.write(
        f"FROM {os.environ['HOLM_BASE_IMAGE']}\n"
        "COPY holm-guest /usr/local/bin/holm-guest\n"
        "RUN chmod 0755 /usr/local/bin/holm-guest\n"
    )
image = modal.Image.from_dockerfile(os.path.join(context, "Dockerfile"), context_dir=context)
image.build(app)
shutil.rmtree(context)
print("image", image.object_id)

tags = {"holm.runtime": "sdk-check", "holm.box": "b-sdk-check"}
sb = modal.Sandbox.create(
    "sleep",
    "infinity",
    app=app,
    image=image,
    env={"HOLM_SDK_CHECK": "1"},
    tags=tags,
    timeout=3600,
    idle_timeout=600,
    cpu=2.0,
    memory=4096,
    encrypted_ports=[8765],
)
print("create", sb.object_id)

tunnels = sb.tunnels()
assert 8765 in tunnels, tunnels
print("tunnels", sorted(tunnels))

p = sb.exec("sh", "-c", "echo hello from $HOLM_SDK_CHECK; echo to stderr >&2; exit 3")
out, err, code = p.stdout.read(), p.stderr.read(), p.wait()
assert out == "hello from 1\n", repr(out)
assert err == "to stderr\n", repr(err)
assert code == 3, code
print("exec", "stdout, stderr and exit code 3")

assert sb.poll() is None, "a running sandbox reported an exit"
assert sb.get_tags() == tags, sb.get_tags()
print("tags", len(tags))
listed = [s.object_id for s in modal.Sandbox.list(app_id=app.app_id, tags={"holm.runtime": "sdk-check"})]
assert listed == [sb.object_id], listed
print("list", len(listed))

sb.terminate()
sb.wait(raise_on_termination=False)
assert sb.poll() is not None, "a terminated sandbox still runs"
print("terminate", "ended")

wrong = modal.Client.from_credentials(os.environ["MODAL_TOKEN_ID"], "as-wrong")
try:
    modal.App.lookup("holm-sdk-check", create_if_missing=True, client=wrong)
    raise AssertionError("a wrong token was accepted")
except AuthError as e:
    print("auth", str(e).splitlines()[0])
