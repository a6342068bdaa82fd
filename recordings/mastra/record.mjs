// Recording: Mastra agents (tools, parallel tool calls, sub-agents, working memory, model retry)
// traced by Mastra's own observability with @mastra/otel-exporter (OTLP http/protobuf, the real
// @opentelemetry/exporter-trace-otlp-proto in a BatchSpanProcessor of batch size 6), sent to the
// recording kit's capture server. The model is the AI SDK's MockLanguageModelV3 driven by a
// per-run script; ground truth is counted in the tool bodies and in the mock model.
//
// Run through record.sh (it builds /work/envs/mastra and starts this file from there, so that
// the packages resolve from that node project): `bash recordings/mastra/record.sh`.

import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';

import { Mastra } from '@mastra/core';
import { Agent } from '@mastra/core/agent';
import { InMemoryStore } from '@mastra/core/storage';
import { createTool } from '@mastra/core/tools';
import { Memory } from '@mastra/memory';
import { Observability } from '@mastra/observability';
import { OtelExporter } from '@mastra/otel-exporter';
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, context, trace } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { APICallError, simulateReadableStream } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { z } from 'zod';

const SCENARIO = 'mastra';
const SCRIPT_DIR = path.dirname(fs.realpathSync(fileURLToPath(import.meta.url)));
const REPO = path.resolve(SCRIPT_DIR, '..', '..');
const OUT = process.env.BADGE_OUT || path.join(REPO, 'tests', 'fixtures', 'recordings', SCENARIO);
const ENV_DIR = process.env.BADGE_ENV_DIR || process.cwd();
const PYTHON = process.env.BADGE_KIT_PYTHON || path.join(ENV_DIR, 'pyenv', 'bin', 'python');
const WORK = path.join(ENV_DIR, 'out');
const BATCH_SIZE = 6;
const ROOT_SCHEDULE_DELAY_MS = 100;
const SHOP = 'shop-agent';
const TRIP = 'trip-planner';

const DESCRIPTION =
  'Mastra 1.71 Agents (tools, parallel tool calls, supervisor with sub-agents as agent-* tools, ' +
  'working memory, model retry, generate and stream) with a scripted AI SDK MockLanguageModelV3; ' +
  "Mastra observability with @mastra/otel-exporter (custom provider, http/protobuf: Mastra's own " +
  'BatchSpanProcessor(maxExportBatchSize=6) over @opentelemetry/exporter-trace-otlp-proto); ' +
  'badge.run roots from @opentelemetry/sdk-trace-node with BatchSpanProcessor(6, 100 ms) and the ' +
  'same exporter; Mastra spans joined to the root via tracingOptions {traceId, parentSpanId}. ' +
  'Node.js 20.';

// -- ground truth ---------------------------------------------------------------------------------

class Run {
  constructor(taskId, runIndex, serviceName, expectedOutput) {
    Object.assign(this, {
      trace_id: '',
      root_span_id: '',
      run_index: runIndex,
      task_id: taskId,
      service_name: serviceName,
      success: false,
      outcome: '',
      error: null,
      output: null,
      expected_output: expectedOutput,
      tool_calls: 0,
      tool_errors: 0,
      tool_calls_by_name: {},
      llm_calls: 0,
      llm_errors: 0,
      input_tokens: 0,
      output_tokens: 0,
      handoffs: 0,
      notes: '',
    });
  }

  tool(name) {
    this.tool_calls += 1;
    this.tool_calls_by_name[name] = (this.tool_calls_by_name[name] || 0) + 1;
  }

  toolError() {
    this.tool_errors += 1;
  }

  llm(inputTokens, outputTokens) {
    this.llm_calls += 1;
    this.input_tokens += inputTokens;
    this.output_tokens += outputTokens;
  }

  llmError() {
    this.llm_calls += 1;
    this.llm_errors += 1;
  }

  handoff() {
    this.handoffs += 1;
  }

  // An attempt that failed and that the framework retries inside the same model call: not a
  // call of its own (kept out of the counters; only mentioned in the run's notes).
  retriedAttempt() {
    this.retried_attempts = (this.retried_attempts || 0) + 1;
  }
}

const stray = new Run('(outside any run)', -1, '', null);
let currentRun = null;

function current() {
  if (currentRun === null) {
    console.error('record: a count was made outside any run');
    return stray;
  }
  return currentRun;
}

// -- scripted model -------------------------------------------------------------------------------

// Each run sets `script[modelId]`: the list of responses that model gives, one per call.
// A response is {tools: [[name, args], ...]}, {text: '...'} or {error: 'fatal' | 'overloaded'}.
let script = {};
let callSeq = 0;
// Model calls, not attempts: Mastra wraps each model call in p-retry (`retries` = the agent's
// model maxRetries; only errors with isRetryable = true are retried), all attempts inside one
// `chat` span. An attempt that fails with a retryable error while retries are left will be
// retried inside the same call, so it is not counted; the attempt that ends the call (success
// or final failure) is. `retriesLeft[modelId]` is the budget left in the model's current call.
const MODEL_RETRIES = {}; // modelId -> the agent's maxRetries (filled once the agents exist)
let retriesLeft = {};
let pendingRetry = {}; // modelId -> an uncounted attempt still waiting for its retry

function usageOf(inputTokens, outputTokens) {
  return {
    inputTokens: { total: inputTokens, noCache: inputTokens, cacheRead: 0, cacheWrite: 0 },
    outputTokens: { total: outputTokens, text: outputTokens, reasoning: 0 },
  };
}

function promptTokens(prompt) {
  // A provider-like count: 4 characters a token over the whole prompt (deterministic per prompt).
  return Math.ceil(JSON.stringify(prompt).length / 4);
}

function nextResponse(modelId, options) {
  const queue = script[modelId] || [];
  const step = queue.shift();
  if (!(modelId in retriesLeft)) retriesLeft[modelId] = MODEL_RETRIES[modelId] ?? 0;
  delete pendingRetry[modelId]; // this attempt is the retry of an uncounted one, if any
  if (step === undefined) {
    retriesLeft[modelId] = MODEL_RETRIES[modelId] ?? 0;
    current().llmError();
    throw new Error(`script exhausted for ${modelId}`);
  }
  if (step.error) {
    const overloaded = step.error === 'overloaded';
    if (overloaded && retriesLeft[modelId] > 0) {
      // retryable and retries left: p-retry will make another attempt in this same call
      retriesLeft[modelId] -= 1;
      pendingRetry[modelId] = true;
      current().retriedAttempt();
    } else {
      // the attempt that ends the call: a failed model call
      retriesLeft[modelId] = MODEL_RETRIES[modelId] ?? 0;
      current().llmError();
    }
    throw new APICallError({
      message: overloaded ? 'Overloaded' : 'Invalid request: context rejected by provider',
      url: 'https://api.scripted.invalid/v1/chat/completions',
      requestBodyValues: {},
      statusCode: overloaded ? 529 : 400,
      responseBody: overloaded ? '{"error":"overloaded"}' : '{"error":"invalid_request"}',
      isRetryable: overloaded,
    });
  }
  retriesLeft[modelId] = MODEL_RETRIES[modelId] ?? 0; // the call ends with this attempt
  callSeq += 1;
  const inputTokens = promptTokens(options.prompt);
  const response = { id: `resp_${String(callSeq).padStart(4, '0')}`, modelId, timestamp: new Date() };
  if (step.tools) {
    const content = step.tools.map(([toolName, args], i) => ({
      type: 'tool-call',
      toolCallId: `call_${callSeq}_${i}`,
      toolName,
      input: JSON.stringify(args),
    }));
    const outputTokens = 12 * content.length;
    current().llm(inputTokens, outputTokens);
    return {
      content,
      finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
      usage: usageOf(inputTokens, outputTokens),
      response,
    };
  }
  const outputTokens = 3 + Math.ceil(step.text.length / 4);
  current().llm(inputTokens, outputTokens);
  return {
    content: [{ type: 'text', text: step.text }],
    finishReason: { unified: 'stop', raw: 'stop' },
    usage: usageOf(inputTokens, outputTokens),
    response,
  };
}

function streamParts(result) {
  const parts = [
    { type: 'stream-start', warnings: [] },
    { type: 'response-metadata', ...result.response },
  ];
  for (const item of result.content) {
    if (item.type === 'text') {
      const half = Math.ceil(item.text.length / 2);
      parts.push({ type: 'text-start', id: 'txt_0' });
      parts.push({ type: 'text-delta', id: 'txt_0', delta: item.text.slice(0, half) });
      parts.push({ type: 'text-delta', id: 'txt_0', delta: item.text.slice(half) });
      parts.push({ type: 'text-end', id: 'txt_0' });
    } else {
      parts.push(item);
    }
  }
  parts.push({ type: 'finish', finishReason: result.finishReason, usage: result.usage });
  return parts;
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function scriptedModel(modelId) {
  return new MockLanguageModelV3({
    provider: 'scripted',
    modelId,
    doGenerate: async (options) => {
      await sleep(8);
      return { ...nextResponse(modelId, options), warnings: [] };
    },
    doStream: async (options) => {
      await sleep(8);
      const result = nextResponse(modelId, options);
      return {
        stream: simulateReadableStream({
          chunks: streamParts(result),
          initialDelayInMs: 4,
          chunkDelayInMs: 1,
        }),
      };
    },
  });
}

// -- tools ----------------------------------------------------------------------------------------

function countedTool(id, description, inputSchema, body) {
  return createTool({
    id,
    description,
    inputSchema,
    execute: async (input) => {
      current().tool(id);
      try {
        await sleep(3);
        return await body(input);
      } catch (error) {
        current().toolError();
        throw error;
      }
    },
  });
}

const PRICES = { apple: 1.5, bread: 2.5, cheese: 4.75, milk: 1.25 };
const RATES = { EUR: 0.9, GBP: 0.8 };

const add = countedTool('add', 'Add two numbers.', z.object({ a: z.number(), b: z.number() }),
  ({ a, b }) => a + b);
const multiply = countedTool('multiply', 'Multiply two numbers.',
  z.object({ a: z.number(), b: z.number() }), ({ a, b }) => a * b);
const lookupPrice = countedTool('lookup_price', 'Price of a grocery item in USD.',
  z.object({ item: z.string() }), ({ item }) => {
    if (!(item in PRICES)) throw new Error(`unknown item ${item}`);
    return { item, usd: PRICES[item] };
  });
const convertCurrency = countedTool('convert_currency', 'Convert a USD amount to a currency.',
  z.object({ amount: z.number(), to: z.string() }), ({ amount, to }) => {
    if (!(to in RATES)) throw new Error(`unsupported currency code ${to}`);
    return { amount: Math.round(amount * RATES[to] * 100) / 100, currency: to };
  });
const searchDocs = countedTool('search_docs', 'Search the shop help-centre articles.',
  z.object({ query: z.string() }), ({ query }) => ({ query, hits: [`Article about ${query}`] }));
const getWeather = countedTool('get_weather', 'Current weather for a city.',
  z.object({ city: z.string() }), ({ city }) => ({ city, celsius: city === 'Paris' ? 18 : 12 }));
const searchWeb = countedTool('search_web', 'Search the web.', z.object({ query: z.string() }),
  ({ query }) => ({ query, results: [`Top result for ${query}`] }));
const getFlightPrice = countedTool('get_flight_price', 'Cheapest flight price in EUR.',
  z.object({ origin: z.string(), destination: z.string() }), () => ({ eur: 120 }));
const bookHotel = countedTool('book_hotel', 'Book a hotel room.',
  z.object({ city: z.string(), hotel: z.string() }), ({ city, hotel }) => {
    if (hotel === 'Ritz') throw new Error(`${hotel} ${city} is sold out`);
    return { confirmation: `${hotel}-${city}-0042` };
  });

// Mastra's working-memory tool (`updateWorkingMemory`) is built by Memory.listTools(); wrap its
// execute so that its body entering is counted like any other tool body.
class CountedMemory extends Memory {
  listTools(config) {
    const tools = super.listTools(config);
    for (const [name, tool] of Object.entries(tools)) {
      if (tool.__counted) continue;
      const inner = tool.execute.bind(tool);
      tool.execute = async (...args) => {
        current().tool(name);
        try {
          return await inner(...args);
        } catch (error) {
          current().toolError();
          throw error;
        }
      };
      tool.__counted = true;
    }
    return tools;
  }
}

// -- agents ---------------------------------------------------------------------------------------

const shop = new Agent({
  id: 'shop',
  name: 'shop',
  description: 'Grocery prices, currency conversion, arithmetic and help-centre search.',
  instructions: 'You are a shop assistant. Use the tools; answer with the bare result.',
  model: scriptedModel('shop-model'),
  maxRetries: 2, // Agent default is 0; with 2, retryable model errors are retried (p-retry)
  tools: { add, multiply, lookup_price: lookupPrice, convert_currency: convertCurrency,
    search_docs: searchDocs },
});

const shopMemo = new Agent({
  id: 'shop-memo',
  name: 'shop-memo',
  description: 'Shop assistant that remembers the customer.',
  instructions: 'You are a shop assistant with memory of the customer. Answer with the price.',
  model: scriptedModel('memo-model'),
  tools: { lookup_price: lookupPrice },
  memory: new CountedMemory({
    storage: new InMemoryStore(),
    options: { lastMessages: 5, workingMemory: { enabled: true } },
  }),
});

const researcher = new Agent({
  id: 'researcher',
  name: 'researcher',
  description: 'Researches destinations on the web.',
  instructions: 'You research travel destinations. Answer in one line.',
  model: scriptedModel('researcher-model'),
  tools: { search_web: searchWeb },
});

const booker = new Agent({
  id: 'booker',
  name: 'booker',
  description: 'Finds flights and books hotels.',
  instructions: 'You book travel. Answer with what you booked.',
  model: scriptedModel('booker-model'),
  tools: { get_flight_price: getFlightPrice, book_hotel: bookHotel },
});

// A supervisor's sub-agents are offered to its model as tools `agent-<name>` that Mastra builds in
// Agent.listAgentTools() (one per generate/stream call). Each execution of such a tool runs the
// sub-agent and returns its answer to the supervisor: an agent used as a tool, so it counts as one
// tool call of the supervisor by the tool's name, on entering the tool's execute (`toolError()`
// when the delegation throws). The sub-agent's own tools and model calls count as usual.
class CountedSupervisor extends Agent {
  async listAgentTools(args) {
    const tools = await super.listAgentTools(args);
    for (const [name, tool] of Object.entries(tools)) {
      if (tool.__counted || typeof tool.execute !== 'function') continue;
      const inner = tool.execute;
      tool.execute = async (...callArgs) => {
        current().tool(name);
        try {
          return await inner.apply(tool, callArgs);
        } catch (error) {
          current().toolError();
          throw error;
        }
      };
      tool.__counted = true;
    }
    return tools;
  }
}

const planner = new CountedSupervisor({
  id: 'planner',
  name: 'planner',
  description: 'Plans trips, delegating research and bookings.',
  instructions: 'You plan trips. Delegate research to researcher and bookings to booker.',
  model: scriptedModel('planner-model'),
  tools: { get_weather: getWeather },
  agents: { researcher, booker },
});

for (const agent of [shop, shopMemo, researcher, booker, planner]) {
  const modelId = agent.model?.modelId;
  if (typeof modelId !== 'string') throw new Error(`no model id on agent ${agent.id}`);
  MODEL_RETRIES[modelId] = agent.maxRetries ?? 0;
}

// -- plumbing -------------------------------------------------------------------------------------

async function startCapture() {
  const child = spawn(PYTHON, ['-m', 'kit.capture', '--out', OUT], {
    cwd: path.join(REPO, 'recordings'),
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines = readline.createInterface({ input: child.stdout });
  const first = await new Promise((resolve, reject) => {
    lines.once('line', resolve);
    child.once('exit', (code) => reject(new Error(`kit.capture exited with ${code}`)));
  });
  lines.on('line', (line) => console.error(`capture: ${line}`));
  return { child, endpoints: JSON.parse(first) };
}

async function stopCapture(child) {
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

function rootProvider(serviceName, url) {
  return new NodeTracerProvider({
    resource: resourceFromAttributes({ 'service.name': serviceName }),
    spanProcessors: [
      new BatchSpanProcessor(new OTLPTraceExporter({ url }), {
        maxExportBatchSize: BATCH_SIZE,
        scheduledDelayMillis: ROOT_SCHEDULE_DELAY_MS,
      }),
    ],
  });
}

function mastraFor(serviceName, agents, url) {
  const exporter = new OtelExporter({
    provider: { custom: { endpoint: url, protocol: 'http/protobuf' } },
    batchSize: BATCH_SIZE,
  });
  const mastra = new Mastra({
    agents,
    logger: false,
    observability: new Observability({
      configs: { default: { serviceName, exporters: [exporter] } },
    }),
  });
  return { mastra, exporter };
}

const runs = [];

// One run: root span `badge.run` (new trace) made current; the Mastra call gets its ids through
// tracingOptions so that Mastra's trace is the root's trace and its agent span the root's child.
async function record(provider, serviceName, task, call) {
  const run = new Run(task.id, runs.length, serviceName, task.expected);
  run.notes = task.notes || '';
  runs.push(run);
  script = structuredClone(task.script);
  retriesLeft = {};
  pendingRetry = {};
  const tracer = provider.getTracer('badge.acceptance');
  const root = tracer.startSpan('badge.run', {
    kind: SpanKind.INTERNAL,
    attributes: { 'badge.task.id': task.id },
  }, ROOT_CONTEXT);
  const ids = root.spanContext();
  run.trace_id = ids.traceId;
  run.root_span_id = ids.spanId;
  const tracingOptions = { traceId: ids.traceId, parentSpanId: ids.spanId };
  currentRun = run;
  try {
    const output = await context.with(trace.setSpan(ROOT_CONTEXT, root), () =>
      call(tracingOptions));
    run.output = output;
    run.success = output === task.expected;
    run.outcome = run.success ? 'ok' : 'wrong_answer';
  } catch (error) {
    run.success = false;
    run.outcome = 'exception';
    run.error = `${error.constructor.name}: ${error.message}`;
    root.recordException(error);
    root.setStatus({ code: SpanStatusCode.ERROR, message: run.error.slice(0, 200) });
  } finally {
    for (const modelId of Object.keys(pendingRetry)) {
      // an attempt left uncounted as "will be retried" that no retry followed: it ended its call
      console.error(`record: run ${run.run_index}: ${modelId} attempt was not retried; counted`);
      run.llmError();
    }
    currentRun = null;
    root.setAttribute('badge.run.success', run.success);
    root.end();
  }
  const left = Object.entries(script).filter(([, queue]) => queue.length);
  if (left.length) console.error(`record: run ${run.run_index} left script steps`, left);
  console.error(`record: run ${run.run_index} ${task.id}: ${run.outcome}` +
    `${run.error ? ` (${run.error})` : ''} tools=${run.tool_calls} llm=${run.llm_calls} ` +
    `handoffs=${run.handoffs}` +
    `${run.retried_attempts ? ` retried_attempts=${run.retried_attempts}` : ''}`);
  await sleep(150);
}

// -- tasks ----------------------------------------------------------------------------------------

const tools = (...calls) => ({ tools: calls });
const text = (value) => ({ text: value });

const SHOP_TASKS = [
  {
    id: 'chitchat', prompt: 'Hi there!', expected: 'Hello! How can I help?',
    script: { 'shop-model': [text('Hello! How can I help?')] },
    notes: 'no tool call',
  },
  {
    id: 'arith-sum', prompt: 'What is (1+2)+(3+4)?', expected: '10',
    script: { 'shop-model': [
      tools(['add', { a: 1, b: 2 }], ['add', { a: 3, b: 4 }]),
      tools(['add', { a: 3, b: 7 }]),
      text('10'),
    ] },
    notes: 'two parallel tool calls in one model step, then one more',
  },
  {
    id: 'arith-sum', prompt: 'What is (1+2)+(3+4)?', expected: '10',
    script: { 'shop-model': [
      tools(['add', { a: 1, b: 2 }], ['add', { a: 3, b: 4 }]),
      tools(['add', { a: 3, b: 7 }]),
      text('11'),
    ] },
    notes: 'wrong final answer',
  },
  {
    id: 'basket-eur', prompt: 'Price of apple, bread, cheese and milk together, in EUR?',
    expected: '9 EUR',
    script: { 'shop-model': [
      tools(['lookup_price', { item: 'apple' }], ['lookup_price', { item: 'bread' }],
        ['lookup_price', { item: 'cheese' }], ['lookup_price', { item: 'milk' }]),
      tools(['convert_currency', { amount: 10, to: 'EUR' }]),
      text('9 EUR'),
    ] },
    notes: 'four parallel tool calls, then one',
  },
  {
    id: 'fx-convert', prompt: 'Convert 20 USD to euros.', expected: '18 EUR',
    script: { 'shop-model': [
      tools(['convert_currency', { amount: 20, to: 'EURO' }]),
      tools(['convert_currency', { amount: 20, to: 'EUR' }]),
      text('18 EUR'),
    ] },
    notes: 'tool raises (unsupported code); the error goes back to the model, which recovers',
  },
  {
    id: 'arith-chain', prompt: 'What is (1+2)*(3+4)*(5+6)*(7+8)?', expected: '3465',
    script: { 'shop-model': [
      tools(['add', { a: 1, b: 2 }], ['add', { a: 3, b: 4 }], ['add', { a: 5, b: 6 }],
        ['add', { a: 7, b: 8 }]),
      tools(['multiply', { a: 3, b: 7 }], ['multiply', { a: 11, b: 15 }]),
      tools(['multiply', { a: 21, b: 165 }]),
      text('3465'),
    ] },
    notes: 'seven tool calls over three model steps',
  },
  {
    id: 'doc-search', prompt: 'How long is the refund window?', expected: '30 days',
    script: { 'shop-model': [
      tools(['search_docs', { query: 'refund policy' }]),
      tools(['search_docs', { query: 'refund window days' }]),
      { error: 'fatal' },
    ] },
    notes: 'the third model call fails with a non-retryable APICallError (400): exception escapes',
  },
  {
    id: 'price-apple', prompt: 'How much is an apple?', expected: '1.5 USD',
    script: { 'shop-model': [
      { error: 'overloaded' },
      tools(['lookup_price', { item: 'apple' }]),
      text('1.5 USD'),
    ] },
    notes: "the first model call's first attempt fails with a retryable APICallError (529); " +
      "Mastra's p-retry retries it inside the same call (one call, not two)",
  },
  {
    id: 'basket-stream', prompt: 'Apple plus bread, in USD?', expected: '4 USD', stream: true,
    script: { 'shop-model': [
      tools(['lookup_price', { item: 'apple' }], ['lookup_price', { item: 'bread' }]),
      text('4 USD'),
    ] },
    notes: 'agent.stream() (doStream) with two parallel tool calls',
  },
  {
    id: 'fx-convert', prompt: 'Convert 5 USD to euros.', expected: '4.5 EUR',
    script: { 'shop-model': [
      tools(['convert_currency', { amount: 5, to: 'EURO' }]),
      tools(['convert_currency', { amount: 5, to: 'EURO' }]),
      text('5 EUR'),
    ] },
    notes: 'the tool raises twice; the model gives up with a wrong answer',
  },
];

const MEMO_TASKS = [
  {
    id: 'memo-price', prompt: "I'm Ada and vegetarian. How much is cheese?", expected: '4.75 USD',
    script: { 'memo-model': [
      tools(['updateWorkingMemory', { memory: '# Customer\n- Name: Ada\n- Diet: vegetarian' }],
        ['lookup_price', { item: 'cheese' }]),
      text('4.75 USD'),
    ] },
    notes: "Mastra Memory's built-in updateWorkingMemory tool beside a user tool, in parallel",
  },
];

const TRIP_TASKS = [
  {
    id: 'trip-weather', prompt: 'Weather in Paris?', expected: '18C',
    script: { 'planner-model': [tools(['get_weather', { city: 'Paris' }]), text('18C')] },
    notes: 'supervisor uses its own tool, no delegation',
  },
  {
    id: 'trip-research', prompt: 'What should I see in Lisbon?', expected: 'Belem Tower and Alfama',
    script: {
      'planner-model': [tools(['agent-researcher', { prompt: 'Top sights in Lisbon' }]),
        text('Belem Tower and Alfama')],
      'researcher-model': [
        tools(['search_web', { query: 'Lisbon sights' }], ['search_web', { query: 'Lisbon old town' }]),
        text('Belem Tower and Alfama'),
      ],
    },
    notes: 'one delegation (agent-researcher: 1 tool call of the supervisor) to a sub-agent ' +
      'that makes two parallel tool calls',
  },
  {
    id: 'trip-full', prompt: 'Plan a weekend in Rome: sights, flight from Paris and a hotel.',
    expected: 'Rome: Colosseum; flight 120 EUR; Hotel Roma booked; 12C',
    script: {
      'planner-model': [
        tools(['agent-researcher', { prompt: 'Top sight in Rome' }],
          ['agent-booker', { prompt: 'Flight Paris-Rome and a room at Hotel Roma' }]),
        tools(['get_weather', { city: 'Rome' }]),
        text('Rome: Colosseum; flight 120 EUR; Hotel Roma booked; 12C'),
      ],
      'researcher-model': [tools(['search_web', { query: 'Rome top sight' }]), text('Colosseum')],
      'booker-model': [
        tools(['get_flight_price', { origin: 'Paris', destination: 'Rome' }],
          ['book_hotel', { city: 'Rome', hotel: 'Hotel Roma' }]),
        text('Flight 120 EUR, Hotel Roma booked'),
      ],
    },
    notes: 'two delegations in parallel in one supervisor step (agent-researcher, agent-booker: ' +
      '2 tool calls of the supervisor), then a supervisor tool',
  },
  {
    id: 'trip-hotel', prompt: 'Book me the Ritz in Madrid.', expected: 'Ibis Madrid booked',
    script: {
      'planner-model': [tools(['agent-booker', { prompt: 'Book the Ritz in Madrid' }]),
        text('Ibis Madrid booked')],
      'booker-model': [
        tools(['book_hotel', { city: 'Madrid', hotel: 'Ritz' }]),
        tools(['book_hotel', { city: 'Madrid', hotel: 'Ibis' }]),
        text('Ritz sold out; Ibis Madrid booked'),
      ],
    },
    notes: "one delegation (agent-booker); the sub-agent's tool raises (sold out) and the " +
      'sub-agent recovers',
  },
  {
    id: 'trip-research', prompt: 'What should I see in Kyoto?', expected: 'Fushimi Inari',
    script: {
      'planner-model': [tools(['agent-researcher', { prompt: 'Top sight in Kyoto' }]),
        text('Sorry, I could not research Kyoto.')],
      'researcher-model': [{ error: 'fatal' }],
    },
    notes: "the sub-agent's model call fails: the delegation tool (agent-researcher, 1 tool " +
      'call) raises, the supervisor answers wrong',
  },
  {
    id: 'trip-weather', prompt: 'Weather and sights in Oslo?', expected: '12C; fjords',
    script: {
      'planner-model': [
        tools(['get_weather', { city: 'Oslo' }], ['agent-researcher', { prompt: 'Sights in Oslo' }]),
        { error: 'fatal' },
      ],
      'researcher-model': [tools(['search_web', { query: 'Oslo sights' }]), text('fjords')],
    },
    notes: 'a supervisor tool and a delegation (agent-researcher) in parallel, then the ' +
      'supervisor model call fails: exception escapes',
  },
];

// -- main -----------------------------------------------------------------------------------------

function packageVersion(name) {
  const file = path.join(ENV_DIR, 'node_modules', ...name.split('/'), 'package.json');
  return JSON.parse(fs.readFileSync(file, 'utf8')).version;
}

const FRAMEWORK_PACKAGES = ['@mastra/core', '@mastra/observability', '@mastra/otel-exporter',
  '@mastra/memory', 'ai', '@ai-sdk/provider', 'zod'];
const OTEL_PACKAGES = ['@opentelemetry/api', '@opentelemetry/sdk-trace-node',
  '@opentelemetry/sdk-trace-base', '@opentelemetry/resources',
  '@opentelemetry/exporter-trace-otlp-proto', '@opentelemetry/otlp-exporter-base',
  '@opentelemetry/otlp-transformer'];

async function main() {
  fs.mkdirSync(WORK, { recursive: true });
  const { child, endpoints } = await startCapture();
  console.error(`record: capture at ${endpoints.http}`);

  const shopRoot = rootProvider(SHOP, endpoints.http);
  const tripRoot = rootProvider(TRIP, endpoints.http);
  shopRoot.register(); // global context manager (AsyncLocalStorage) for context.with(...)
  const shopSide = mastraFor(SHOP, { shop, 'shop-memo': shopMemo }, endpoints.http);
  const tripSide = mastraFor(TRIP, { planner, researcher, booker }, endpoints.http);

  const shopAgent = shopSide.mastra.getAgent('shop');
  for (const task of SHOP_TASKS) {
    await record(shopRoot, SHOP, task, async (tracingOptions) => {
      const options = { maxSteps: 8, tracingOptions };
      if (!task.stream) return (await shopAgent.generate(task.prompt, options)).text;
      const output = await shopAgent.stream(task.prompt, options);
      let streamed = '';
      for await (const delta of output.textStream) streamed += delta;
      return streamed;
    });
  }
  const memoAgent = shopSide.mastra.getAgent('shop-memo');
  for (const task of MEMO_TASKS) {
    await record(shopRoot, SHOP, task, async (tracingOptions) => (await memoAgent.generate(
      task.prompt,
      { maxSteps: 8, tracingOptions, memory: { thread: `thread-${runs.length}`, resource: 'ada' } },
    )).text);
  }
  const plannerAgent = tripSide.mastra.getAgent('planner');
  for (const task of TRIP_TASKS) {
    await record(tripRoot, TRIP, task, async (tracingOptions) => (await plannerAgent.generate(
      task.prompt,
      {
        maxSteps: 8,
        tracingOptions,
        delegation: { onDelegationStart: () => { current().handoff(); } },
      },
    )).text);
  }

  // Mastra exports each span from an async event bus after it ends: let it drain, then flush.
  await sleep(1000);
  for (const side of [shopSide, tripSide]) await side.exporter.flush();
  for (const provider of [shopRoot, tripRoot]) await provider.forceFlush();
  await sleep(500);
  for (const side of [shopSide, tripSide]) await side.mastra.shutdown?.();
  for (const side of [shopSide, tripSide]) await side.exporter.shutdown();
  for (const provider of [shopRoot, tripRoot]) await provider.shutdown();
  await stopCapture(child);

  const versions = {};
  for (const name of [...FRAMEWORK_PACKAGES, ...OTEL_PACKAGES]) versions[name] = packageVersion(name);
  versions.node = process.versions.node;
  const exporterInfo = (service) => ({
    protocol: 'http/protobuf',
    compression: 'none',
    exporter: '@opentelemetry/exporter-trace-otlp-proto OTLPTraceExporter',
    batch: {
      mastra_spans: { via: '@mastra/otel-exporter OtelExporter({provider: {custom}, batchSize})',
        max_export_batch_size: BATCH_SIZE, schedule_delay_millis: 5000 },
      root_span: { via: `@opentelemetry/sdk-trace-node NodeTracerProvider (service ${service})`,
        max_export_batch_size: BATCH_SIZE, schedule_delay_millis: ROOT_SCHEDULE_DELAY_MS },
    },
  });
  const truthFile = path.join(WORK, 'truth.json');
  fs.writeFileSync(truthFile, JSON.stringify({
    runs,
    exporters: { [SHOP]: exporterInfo(SHOP), [TRIP]: exporterInfo(TRIP) },
    notes: NOTES,
  }, null, 1));
  const versionsFile = path.join(WORK, 'versions.json');
  fs.writeFileSync(versionsFile, JSON.stringify(versions, null, 1));
  if (stray.tool_calls || stray.llm_calls || stray.handoffs) {
    console.error('record: WARNING counts outside runs', stray);
  }

  const finish = spawn(PYTHON, ['-m', 'kit.finish', '--out', OUT, '--truth', truthFile,
    '--scenario', SCENARIO, '--description', DESCRIPTION, '--packages-json', versionsFile,
    '--framework-packages', FRAMEWORK_PACKAGES.join(',')],
  { cwd: path.join(REPO, 'recordings'), stdio: 'inherit' });
  const code = await new Promise((resolve) => finish.once('exit', resolve));
  process.exit(code);
}

const NOTES = [
  'Span names and attributes come from @mastra/otel-exporter\'s SpanConverter (GenAI semconv ' +
    '1.38 style); every span also carries `mastra.span.type` (Mastra\'s SpanType).',
  'One model call = `chat <model id>` (CLIENT, `gen_ai.operation.name = chat`, ' +
    '`mastra.span.type = model_inference`) with that call\'s `gen_ai.usage.*`. Its parent ' +
    '`agent_step <agent>` (`model_step`) is one turn of the loop and holds the turn\'s ' +
    '`execute_tool` spans; `model_generation <model id>` (no usage) is the whole loop. This is ' +
    'the shape when @mastra/otel-exporter >= 1.4 pairs with @mastra/observability/core that ' +
    'report the `model-inference-span` feature; older pairings (e.g. @mastra/otel-bridge 1.5.4, ' +
    'which pins otel-exporter 1.3.12) export the whole loop as `chat <model>` with summed usage ' +
    'and the calls as `model_step` / `model_inference` (other).',
  'A failed model call still ends its `chat` span with status OK (no usage, ' +
    '`gen_ai.response.finish_reasons = ["error"]`); the error is on `invoke_agent` (ERROR + ' +
    'exception event, `error.type = unknown`). A retried call (retryable APICallError, ' +
    'Agent maxRetries, p-retry around doGenerate/doStream) is ONE `chat` span covering both ' +
    'attempts and the backoff, with the successful attempt\'s usage; ground truth counts model ' +
    'calls, not attempts (an attempt that will be retried is not counted), so run price-apple ' +
    'has 2 model calls in truth and 2 chat spans.',
  'Tools: `execute_tool <tool id>` (INTERNAL, `gen_ai.operation.name = execute_tool`, ' +
    '`gen_ai.tool.name`, `gen_ai.tool.call.id` = the model\'s tool call id, arguments/result, ' +
    '`gen_ai.tool.type = tool`); a tool that throws: ERROR + exception event + `error.message`.',
  'Sub-agents (Agent `agents: {...}`) are offered to the model as tools `agent-<name>`; a ' +
    'delegation is `execute_tool agent-<name>` (same attributes as any tool, ' +
    '`gen_ai.tool.type = tool`) whose child is `invoke_agent <name>` with the sub-agent\'s ' +
    'own loop. A delegation runs the sub-agent and returns its answer to the supervisor (an ' +
    'agent used as a tool), so ground truth counts it as ONE tool call of the supervisor by ' +
    'the tool name (`agent-researcher`), counted on entering the agent tool\'s execute (a ' +
    'wrapper on Agent.listAgentTools()), plus the sub-agent\'s own tools and model calls; ' +
    'a failed delegation (run 15) is a tool call with an error. Each delegation is also ' +
    'recorded as a handoff (onDelegationStart; recorded, not compared): Mastra has no handoff ' +
    'proper (control passing for good) here.',
  'Memory: the built-in `updateWorkingMemory` tool is an ordinary `execute_tool` span and is ' +
    'counted as a tool call (its body is wrapped); memory adds `processor_run ...` and ' +
    '`memory_operation MessageHistory` spans. `model_chunk <agent>` spans (one per streamed ' +
    'tool call / text part, some ending UNSET) and `mapping agent-<name>` spans are other.',
  'Timestamps of Mastra spans have millisecond resolution (JS Date): `invoke_agent` can end up ' +
    'to 1 ms after the badge.run root. Mastra\'s BatchSpanProcessor has a fixed 5 s ' +
    'schedule delay, so a run\'s last Mastra spans can arrive in a much later request than ' +
    'its root (run memo-price: agent span in the final request). The exporter also sends ' +
    'OTLP logs to /v1/logs (answered, not recorded).',
];

await main();
