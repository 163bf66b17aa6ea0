// The TypeScript SDK's suite, in one process so its parts share the boxes
// (node --test runs each file in a process of its own). Each part registers
// its tests on import; the shared boxes go when the suite ends.

import { after } from "node:test";
import { removeShared } from "./helpers.mjs";

import "./package.mjs";
import "./desktop.mjs";
import "./commands.mjs";
import "./browser.mjs";
import "./compat.mjs";
import "./records.mjs";
import "./lifecycle.mjs";
import "./examples.mjs";

after(removeShared);
