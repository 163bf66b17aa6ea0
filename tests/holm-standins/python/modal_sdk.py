"""Modal's own Python client (pinned in requirements.txt) against holm's
Modal stand-in, unchanged but for its address (MODAL_SERVER_URL,
MODAL_TOKEN_ID and MODAL_TOKEN_SECRET in the environment; the image is
HOLM_BASE_IMAGE, which the local engine has). Each check prints a line; any
failure raises and exits non-zero."""

import os

import modal
from modal.exception import AuthError, NotFoundError

app = modal.App.lookup("holm-sdk-check", create_if_missing=True)
print("app", app.app_id)

image = modal.Image.from_registry(os.environ["HOLM_BASE_IMAGE"])
sb = modal.Sandbox.create("sleep", "infinity", app=app, image=image, timeout=600, cpu=1.0, memory=512)
print("create", sb.object_id)

p = sb.exec("sh", "-c", "echo hello from modal; echo to stderr >&2; exit 3")
out, err, code = p.stdout.read(), p.stderr.read(), p.wait()
assert out == "hello from modal\n", repr(out)
assert err == "to stderr\n", repr(err)
assert code == 3, code
print("exec", "stdout, stderr and exit code 3")

assert sb.poll() is None, "a running sandbox reported an exit"
listed = [s.object_id for s in modal.Sandbox.list(app_id=app.app_id)]
assert sb.object_id in listed, listed
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
