// `module` handlers for the apps example: a small in-memory order book (it resets on restart).
// Each returns a plain object (an unknown id throws: the call fails with BACKEND_FAILED): with output_mode json it is the tool's structuredContent, which
// the views render.
const orders = new Map([
  ['A-1001', { id: 'A-1001', customer: 'C-7', item: 'Espresso beans, 1 kg', total: 24.5, status: 'open' }],
  ['A-1002', { id: 'A-1002', customer: 'C-7', item: 'Burr grinder', total: 129, status: 'open' }],
  ['A-1003', { id: 'A-1003', customer: 'C-9', item: 'Milk jug', total: 14.9, status: 'shipped' }],
]);
const customers = new Map([
  ['C-7', { id: 'C-7', name: 'Ada Lovelace', email: 'ada@example.com' }],
  ['C-9', { id: 'C-9', name: 'Grace Hopper', email: 'grace@example.com' }],
]);

export function list() {
  return { orders: [...orders.values()] };
}

export function cancel(input, context) {
  const order = orders.get(input.id);
  if (!order) throw new Error(`no order ${input.id}`);
  if (order.status === 'open') order.status = 'cancelled';
  return { order, by: context.principal.sub };
}

export function customer(input) {
  const c = customers.get(input.id);
  if (!c) throw new Error(`no customer ${input.id}`);
  return { ...c, orders: [...orders.values()].filter((o) => o.customer === c.id) };
}
