// The flows the app carries, in the order of their tabs; the first is where the app opens. A flow is a folder of its
// own, flows/<flow>/, whose index.js exports its `flow` (name, tab title, stylesheet, notices) and `mount`, and a line
// here: the shell names none of them.

import * as delivery from "./flows/delivery/index.js";
import * as tutoring from "./flows/tutoring/index.js";
import * as exchange from "./flows/exchange/index.js";
import * as rides from "./flows/rides/index.js";

export const flows = [delivery, tutoring, exchange, rides];
