// E2B's own TypeScript SDK (`e2b`, pinned in package.json) against holm's
// E2B stand-in, unchanged but for its address (E2B_API_URL,
// E2B_SANDBOX_URL and E2B_API_KEY in the environment). Each check prints a
// line; any failure throws and exits non-zero. The same checks as
// ../python/e2b_sdk.py.

import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { AuthenticationError, NotFoundError, Sandbox, SandboxError } from 'e2b'

const run = randomUUID().replaceAll('-', '').slice(0, 12)
const metadata = { suite: 'sdk', run }

const sbx = await Sandbox.create('base', { timeoutMs: 120_000, metadata })
console.log('create', sbx.sandboxId)

const info = await Sandbox.getInfo(sbx.sandboxId)
assert.deepEqual(info.metadata, metadata)
assert.equal(info.state, 'running')
console.log('get', info.state)

const other = await Sandbox.create('base', { timeoutMs: 120_000, metadata })
const pages = Sandbox.list({ query: { metadata: { run } }, limit: 1 })
const ids = []
while (pages.hasNext) ids.push(...(await pages.nextItems()).map((s) => s.sandboxId))
assert.deepEqual(ids.sort(), [sbx.sandboxId, other.sandboxId].sort())
console.log('list', ids.length, 'in pages of 1')
assert.deepEqual(await Sandbox.list({ query: { metadata: { run: 'nobody' } } }).nextItems(), [])
await other.kill()

await sbx.setTimeout(300_000)
const now = await sbx.getInfo()
const left = (now.endAt - now.startedAt) / 1000
assert.ok(left >= 290 && left <= 310, `${left}`)
console.log('timeout', Math.round(left))

assert.equal(await sbx.pause(), true)
assert.equal((await Sandbox.getInfo(sbx.sandboxId)).state, 'paused')
assert.equal(await sbx.pause(), false, 'pausing a paused sandbox is refused (409): false')
console.log('pause', 'paused; again refused')

const resumed = await Sandbox.connect(sbx.sandboxId, { timeoutMs: 120_000 })
assert.equal(resumed.sandboxId, sbx.sandboxId)
assert.equal((await Sandbox.getInfo(sbx.sandboxId)).state, 'running')
console.log('resume', 'running')

await assert.rejects(Sandbox.create('base', { timeoutMs: 25 * 3600 * 1000 }), (e) => {
  assert.ok(e instanceof SandboxError, `${e}`)
  assert.match(e.message, /Timeout cannot be greater than 24 hours/)
  console.log('limit', e.message)
  return true
})

assert.equal(await sbx.kill(), true)
assert.equal(await Sandbox.kill(sbx.sandboxId), false, 'killing a killed sandbox answers 404: false')
await assert.rejects(Sandbox.getInfo(sbx.sandboxId), (e) => {
  assert.ok(e instanceof NotFoundError, `${e}`)
  console.log('delete', 'gone')
  return true
})

await assert.rejects(Sandbox.create('base', { apiKey: 'e2b_' + '0'.repeat(40) }), (e) => {
  assert.ok(e instanceof AuthenticationError, `${e}`)
  console.log('auth', e.message.split('\n')[0])
  return true
})
process.exit(0)
