// Delivery (Tarrare's own app). A deliverer checks in at a restaurant (delivering.js), answers the offers that come
// (offer.js) and shares their position while bringing the food (match.js); an orderer picks a restaurant with
// deliverers and orders (ordering.js), waits for a match (order.js) and follows the deliverer on a map. Both mark the
// delivery complete.
//
// Screens by hash: #/delivery (the two sides, home.js), #/delivery/offer/<offerId>, #/delivery/order/<orderId>,
// #/delivery/match/<matchId>. The Delivery tab (plain #/delivery) asks the server what the person has under way and
// comes back to it.

import { lifetime } from "../../lifetime.js";
import { home } from "./home.js";
import { matchScreen } from "./match.js";
import { offerScreen } from "./offer.js";
import { orderScreen } from "./order.js";

/** The flow as the page's shell knows it: its tab, its styles, and the notices of its events. */
export const flow = {
  name: "delivery",
  title: "Delivery",
  stylesheet: new URL("delivery.css", import.meta.url).href,
  notices: {
    "offer.made": (data) => `${data.ordererName} asks you to bring ${data.items} from ${data.restaurant?.name}`,
    "match.accepted": () => "A deliverer accepted your order",
    "order.taken": (data) => `${data.delivererName} took your order from the open requests`,
    "match.cancelled": () => "A delivery was cancelled",
    "match.completed": () => "A delivery is complete",
    "order.expired": () => "Your order expired without a deliverer",
  },
};

export function mount(root, context) {
  const [screen, id] = context.params;
  const life = lifetime();
  const show = { offer: offerScreen, order: orderScreen, match: matchScreen }[screen];
  if (show && id) show(root, context, id, life);
  else home(root, context, life);
  return () => life.end();
}
