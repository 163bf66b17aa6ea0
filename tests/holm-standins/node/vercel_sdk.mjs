// Vercel's own TypeScript SDK (`@vercel/sandbox`, pinned in package.json)
// against holm's Vercel stand-in, unchanged but for its address: the SDK
// takes a `fetch`, and the one given here sends what the SDK addresses to
// https://vercel.com/api to VERCEL_API_URL instead, nothing else changed.
// VERCEL_TOKEN, VERCEL_TEAM_ID and VERCEL_PROJECT_ID are the credentials.
// Each check prints a line; any failure throws and exits non-zero.

import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { APIError, Sandbox } from '@vercel/sandbox'

const base = process.env.VERCEL_API_URL
const fetchAt = (input, init) => {
  const url = String(input instanceof Request ? input.url : input)
  assert.ok(url.startsWith('https://vercel.com/api/'), `the SDK called ${url}`)
  return fetch(base + url.slice('https://vercel.com/api'.length), init)
}
const credentials = {
  token: process.env.VERCEL_TOKEN,
  teamId: process.env.VERCEL_TEAM_ID,
  projectId: process.env.VERCEL_PROJECT_ID,
  fetch: fetchAt,
}
const run = randomUUID().replaceAll('-', '').slice(0, 12)

const sbx = await Sandbox.create({
  ...credentials,
  name: `sdk-${run}`,
  ports: [3000],
  timeout: 120_000,
  resources: { vcpus: 1 },
  tags: { suite: 'sdk', run },
  persistent: false,
})
assert.equal(sbx.status, 'running')
assert.equal(sbx.vcpus, 1)
assert.equal(sbx.memory, 2048)
const route = sbx.routes.find((r) => r.port === 3000)
assert.ok(route.url.startsWith('http://127.0.0.1:'), route.url)
assert.equal(sbx.domain(3000), `https://${route.subdomain}.vercel.run`)
console.log('create', sbx.name)

const got = await Sandbox.get({ ...credentials, name: sbx.name })
assert.equal(got.tags.run, run)
assert.equal(got.status, 'running')
console.log('get', got.status)

const other = await Sandbox.create({ ...credentials, timeout: 60_000, tags: { suite: 'sdk', run } })
const listed = await (await Sandbox.list({ ...credentials, tags: { run }, limit: 1 })).toArray()
assert.deepEqual(listed.map((s) => s.name).sort(), [sbx.name, other.name].sort())
const nobody = await (await Sandbox.list({ ...credentials, tags: { run: 'nobody' } })).toArray()
assert.deepEqual(nobody, [])
await other.delete()
console.log('list', listed.length)

const out = await sbx.runCommand('sh', ['-c', 'echo héllo; echo oops >&2; exit 3'])
assert.equal(out.exitCode, 3)
assert.equal(await out.stdout(), 'héllo\n')
assert.equal(await out.stderr(), 'oops\n')
const root = await sbx.runCommand({ cmd: 'id', args: ['-u'], sudo: true, env: { SDK_RUN: run } })
assert.equal((await root.stdout()).trim(), '0')
const detached = await sbx.runCommand({ cmd: 'sh', args: ['-c', 'sleep 0.3; echo later'], detached: true })
const done = await detached.wait()
assert.equal(done.exitCode, 0)
assert.equal(await done.stdout(), 'later\n')
console.log('exec', out.exitCode)

await sbx.writeFiles([{ path: '/tmp/sdk/note.txt', content: Buffer.from('from the SDK') }])
const back = await sbx.readFileToBuffer({ path: '/tmp/sdk/note.txt' })
assert.equal(back.toString(), 'from the SDK')
assert.equal(await sbx.readFileToBuffer({ path: '/tmp/sdk/none.txt' }), null)
console.log('files', back.length)

const before = sbx.expiresAt.getTime()
await sbx.extendTimeout(60_000)
assert.equal(sbx.expiresAt.getTime(), before + 60_000)
console.log('timeout', sbx.expiresAt.toISOString())

await assert.rejects(
  Sandbox.create({ ...credentials, ports: Array.from({ length: 16 }, (_, i) => 3000 + i) }),
  (e) => {
    assert.ok(e instanceof APIError, `${e}`)
    assert.equal(e.response.status, 400)
    console.log('limit', e.message)
    return true
  },
)

await sbx.stop()
await assert.rejects(sbx.runCommand('true'), (e) => {
  assert.ok(e instanceof APIError, `${e}`)
  assert.equal(e.response.status, 410)
  console.log('stop', e.json.error.code)
  return true
})

await sbx.delete()
await assert.rejects(Sandbox.get({ ...credentials, name: sbx.name }), (e) => {
  assert.ok(e instanceof APIError, `${e}`)
  assert.equal(e.response.status, 404)
  console.log('delete', 'gone')
  return true
})

await assert.rejects(
  Sandbox.get({ ...credentials, token: 'wrong_token_wrong_token_', name: sbx.name }),
  (e) => {
    assert.ok(e instanceof APIError, `${e}`)
    assert.equal(e.response.status, 403)
    console.log('auth', e.message)
    return true
  },
)
process.exit(0)
