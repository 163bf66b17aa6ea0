// Daytona's own TypeScript SDK (`@daytonaio/sdk`, pinned in package.json)
// against holm's Daytona stand-in, unchanged but for its address
// (DAYTONA_API_URL and DAYTONA_API_KEY in the environment). Each check
// prints a line; any failure throws and exits non-zero. The same checks as
// ../python/daytona_sdk.py.

import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { Daytona, DaytonaError } from '@daytonaio/sdk'

const run = randomUUID().replaceAll('-', '').slice(0, 12)
const daytona = new Daytona()

const sbx = await daytona.create(
  { labels: { suite: 'sdk', run }, autoStopInterval: 30, autoDeleteInterval: -1 },
  { timeout: 120 },
)
assert.equal(sbx.state, 'started')
console.log('create', sbx.id)

const got = await daytona.get(sbx.id)
assert.equal(got.labels.run, run)
assert.equal(got.labels.suite, 'sdk')
assert.equal(got.autoStopInterval, 30)
console.log('get', got.state)

const listed = []
for await (const s of daytona.list({ labels: { run } })) listed.push(s.id)
assert.deepEqual(listed, [sbx.id])
const nobody = []
for await (const s of daytona.list({ labels: { run: 'nobody' } })) nobody.push(s.id)
assert.deepEqual(nobody, [])
console.log('list', listed.length)

await sbx.setAutostopInterval(5)
assert.equal((await daytona.get(sbx.id)).autoStopInterval, 5)
console.log('timeout', 'auto-stop 5 minutes')

const preview = await sbx.getPreviewLink(8765)
assert.ok(preview.url.startsWith('http://127.0.0.1:') && preview.token, JSON.stringify(preview))
console.log('preview', 'url and token')

await sbx.stop()
assert.equal((await daytona.get(sbx.id)).state, 'stopped')
await sbx.start()
assert.equal((await daytona.get(sbx.id)).state, 'started')
console.log('stop-start', 'stopped, started')

await assert.rejects(sbx.pause(), (e) => {
  assert.ok(e instanceof DaytonaError, `${e}`)
  console.log('pause', 'refused:', e.message.split('\n')[0])
  return true
})

await sbx.delete()
await assert.rejects(daytona.get(sbx.id), (e) => {
  assert.ok(e instanceof DaytonaError, `${e}`)
  assert.match(e.message.toLowerCase(), /not found/)
  console.log('delete', 'gone')
  return true
})

const wrong = new Daytona({ apiKey: 'dtn_wrong', apiUrl: process.env.DAYTONA_API_URL })
await assert.rejects(wrong.get(sbx.id), (e) => {
  assert.ok(e instanceof DaytonaError, `${e}`)
  console.log('auth', e.message.split('\n')[0])
  return true
})
process.exit(0)
