// Example: a LangGraph.js refund desk on the Logbook journal: a person approves at interrupt(), emails go out once.
//
// Offline by default: the "model" node is scripted. The graph's checkpoints live in the run's journal (LogbookSaver);
// each execution of a node is a step of the run; interrupt() waits as an approval gate. Try it:
//   logbook run examples/langgraph-refund.ts --input '{"customer":"ada@example.com","amount":40}'
//   logbook approve <run-id> <action-id> --note '{"approve":true}'     (the id `logbook show <run-id>` lists)
// Kill it anywhere (`--crash-at email.send#2@after-start`), resume it: no customer gets an email twice.
// Time travel: `"from": { "thread": "<run-id>", "checkpoint": "<checkpoint id>" }` in the input starts a new run from
// that run's thread at that checkpoint (LangGraph's fork); the journal records the new run as its fork.

import { z } from 'zod';
import { Annotation, END, START, StateGraph, interrupt } from '@langchain/langgraph';
import { defineAction, defineAgent } from 'agent-logbook';
import { LogbookSaver, logbookDo, runGraph } from 'agent-logbook/langgraph';
import { outbox } from './providers/outbox';

const sendEmail = defineAction({
  type: 'email.send',
  version: 1,
  effect: 'non-idempotent',
  args: z.object({ to: z.string().email(), body: z.string() }),
  // logbookDo prefixes the key with the node's place (thread, checkpoint namespace, task).
  key: (args) => `email:${args.to}`,
  execute: (args, { idempotencyKey }) => outbox.send({ ...args, idempotencyKey }),
  verify: (_args, { idempotencyKey }) => outbox.find(idempotencyKey),
});

const State = Annotation.Root({
  customer: Annotation<string>(),
  amount: Annotation<number>(),
  log: Annotation<string[]>({ reducer: (a, b) => a.concat(b), default: () => [] }),
  approved: Annotation<boolean>(),
});

/** The scripted model: what a model would propose for the ticket (deterministic, offline). */
function proposeRefund(amount: number): string {
  return amount <= 100 ? `refund ${amount} EUR in full` : `refund 100 EUR of ${amount} EUR`;
}

const saver = new LogbookSaver();

export const graph = new StateGraph(State)
  .addNode('acknowledge', async (s) => {
    await logbookDo(sendEmail, { to: s.customer, body: 'We received your refund request.' });
    return { log: ['acknowledged'] };
  })
  .addNode('propose', (s) => ({ log: [`model: ${proposeRefund(s.amount)}`] }))
  .addNode('review', (s) => {
    // The node runs again from its top once answered: everything before interrupt() must be safe to repeat.
    const answer: unknown = interrupt({ question: `Approve: ${s.log.at(-1) ?? ''}?`, customer: s.customer });
    const approved = !(answer === false || (typeof answer === 'object' && answer !== null && (answer as { approve?: unknown }).approve === false));
    return { approved, log: [approved ? 'approved' : 'declined'] };
  })
  .addNode('reply', async (s) => {
    const body = s.approved ? `Your refund is on its way: ${proposeRefund(s.amount)}.` : 'We cannot refund this order.';
    const sent = await logbookDo(sendEmail, { to: s.customer, body });
    return { log: [`replied ${sent.messageId}`] };
  })
  .addEdge(START, 'acknowledge')
  .addEdge('acknowledge', 'propose')
  .addEdge('propose', 'review')
  .addEdge('review', 'reply')
  .addEdge('reply', END)
  .compile({ checkpointer: saver });

export default defineAgent({
  name: 'langgraph-refund',
  input: z.object({
    customer: z.string().email().default('ada@example.com'),
    amount: z.number().positive().default(40),
    from: z.object({ thread: z.string(), checkpoint: z.string() }).optional(),
  }),
  async run(run, input) {
    const final = (
      input.from
        ? // LangGraph's time travel: on from a past checkpoint of another run's thread (that config, as graph.invoke takes it).
          await runGraph(run, graph, null, { name: 'refund desk', config: { configurable: { thread_id: input.from.thread, checkpoint_id: input.from.checkpoint } } })
        : await runGraph(run, graph, { customer: input.customer, amount: input.amount }, { name: 'refund desk' })
    ) as { log: string[]; approved: boolean };
    return { approved: final.approved, log: final.log };
  },
  probe: () => ({ 'email.send': outbox.record().sent.map((s) => s.key) }),
});
