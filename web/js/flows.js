// The flows the app carries, in the order of their tabs; the first is where the app opens. A new flow is a module of
// its own (its `flow` and `mount`) and a line here: the shell names none of them.

import * as delivery from "./views/delivery.js";
import * as tutoring from "./views/tutoring.js";
import * as exchange from "./views/exchange.js";
import * as rides from "./views/rides.js";

export const flows = [delivery, tutoring, exchange, rides];
