// A complete screenshot -> decide -> act loop against a box, with
// @holm/sdk and a running holmd (HOLM_SERVER_URL, HOLM_SERVER_TOKEN).
//
// The goal: type a line into a terminal window. The loop looks at the
// screen, decides what to do, acts, and looks again. The decision is a tiny
// rule (find the window that appeared since the first look, click its
// middle, type) so the example runs without a model; the comment in
// `decide` shows where a model call goes. It is
// examples/src/bin/agent_loop.rs (and sdks/python/examples/agent_loop.py)
// in TypeScript.
//
//   npx tsc ... && node agent_loop.js   (the suite compiles and runs it)

import { type Box, FileNotFoundError, Holm, type PngImage, type Screenshot, actions as a, decodePng, type types } from "@holm/sdk";

/** What the loop types, and where the terminal writes it. */
const LINE = "hello from the typescript agent loop";
const FILE = "/tmp/agent-loop.txt";

/** The loop looks at a small copy of the screen: cheap to read without an
 * image library, and enough to see a window appear. */
interface Look {
  shot: Screenshot;
  image: PngImage;
}

async function look(box: Box): Promise<Look> {
  const shot = await box.screenshot({ max_width: 320 });
  return { shot, image: await decodePng(shot.data) };
}

/** The actions to take now, or null to look again. */
function decide(first: Look, now: Look, typed: boolean): types.Action[] | null {
  // A model call goes here: send the screenshot (now.shot.base64()) and the
  // goal to a model that answers actions, such as
  //   const actions = await model.nextActions(GOAL, now.shot.dataUrl());
  // The rule below stands in for it, so the example runs without one.
  if (typed) return null;
  const changed = now.image.changed(first.image, 8);
  if (!changed) return null;
  const [x0, y0] = now.shot.toScreen(changed[0], changed[1]);
  const [x1, y1] = now.shot.toScreen(changed[2], changed[3]);
  if (x1 - x0 < 100 || y1 - y0 < 50) return null;
  // A window at least 100x50 appeared: click its middle and type.
  return [a.click(Math.floor((x0 + x1) / 2), Math.floor((y0 + y1) / 2)), a.type(LINE + "\n")];
}

async function run(box: Box): Promise<void> {
  const first = await look(box);
  // Something to work with: a terminal that writes what it is typed.
  await box.spawn(["xterm", "-geometry", "60x10+200+150", "-e", "sh", "-c", `stty -echo; exec cat > ${FILE}`]);
  let typed = false;
  for (let step = 1; step <= 60; step++) {
    const now = await look(box);
    const actions = decide(first, now, typed);
    if (actions) {
      console.log(`step ${step}: act (${actions.length} actions)`);
      await box.input(actions);
      typed = true;
      continue;
    }
    if (typed) {
      const text = await box.readText(FILE).catch((e) => {
        if (e instanceof FileNotFoundError) return "";
        throw e;
      });
      if (text.includes(LINE)) {
        console.log(`step ${step}: done, ${FILE} holds the line`);
        return;
      }
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  throw new Error("the goal was not reached in 60 steps");
}

const holm = new Holm();
const box = await holm.create({ browser: false });
console.log(`box ${box.id}`);
try {
  await run(box);
} finally {
  await box.remove();
}
