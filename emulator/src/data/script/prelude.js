// The server-side JavaScript API of stored procedures and triggers, as the
// service documents it (azure.github.io/azure-cosmosdb-js-server): written
// here from that documentation, over one native function,
// `__host(operation, argumentsJson) -> resultJson`, that `host.rs` serves
// against the execution's transaction.
//
// Evaluated once per execution in a fresh context, before the script. It
// leaves the documented globals (`getContext`, `__`, `console`, `ErrorCodes`)
// and returns
// the driver `engine.rs` calls: `start`, `step`, `finish`. `errors` is what
// `errors.js` returned.
(function (global, host, setup, errors) {
  'use strict';
  const NativeError = errors.NativeError;
  const stringify = JSON.stringify;
  const parse = JSON.parse;

  global.ErrorCodes = Object.freeze({
    BadRequest: 400, Forbidden: 403, NotFound: 404, Conflict: 409,
    PreconditionFailed: 412, RequestEntityTooLarge: 413, RetryWith: 449,
    InternalServerError: 500,
  });

  function scriptError(status, message) {
    const error = new NativeError(message);
    error.number = status;
    return error;
  }

  // A failed collection operation, as its callback receives it.
  function requestError(failure) {
    const body = stringify({ Errors: [failure.message] });
    const error = new NativeError(body);
    error.number = failure.status;
    error.body = body;
    if (failure.substatus !== undefined) error.substatus = failure.substatus;
    return error;
  }

  // Callbacks run after the code that queued them returns, in order, as
  // the service runs them: one queue, drained by `step`.
  const queue = [];
  let aborted = null;
  const ABORT = Object.freeze({ aborted: true });

  // ---- console.log: kept only with x-ms-documentdb-script-enable-logging
  let log = '';
  global.console = Object.freeze({
    log: function (first) {
      if (!setup.logging) return;
      if (arguments.length > 1) {
        if (typeof first !== 'string') {
          throw scriptError(400, 'First argument to console.log should be a string when more than one argument is given.');
        }
        let index = 1;
        const args = arguments;
        log += first.replace(/%s/g, function (match) {
          return index < args.length ? String(args[index++]) : match;
        });
      } else {
        log += String(first);
      }
    },
  });

  // ---- request and response: a body and named values
  function valueMap(kind, values, writable) {
    return {
      getBody: function () { return values.Body; },
      setBody: function (body) { this.setValue('Body', body); },
      getValue: function (name) { return values[name]; },
      setValue: function (name, value) {
        if (!Object.prototype.hasOwnProperty.call(values, name)) {
          throw scriptError(400, 'Cannot set new values: ' + name);
        }
        if (writable.indexOf(name) < 0) {
          throw scriptError(403, 'Not a writable property: ' + name);
        }
        values[name] = value;
      },
      appendValue: function (name, value) {
        this.setValue(name, values[name] + value);
      },
      appendBody: function (body) { this.appendValue('Body', body); },
      kind: kind,
    };
  }

  const requestValues = { Body: setup.requestBody };
  const request = valueMap('request', requestValues, setup.trigger === 'pre' ? ['Body'] : []);
  request.getOperationType = function () { return setup.operation; };

  const responseValues = { Body: setup.responseBody };
  let response;
  if (setup.kind === 'sproc') {
    response = valueMap('response', responseValues, ['Body']);
  } else if (setup.trigger === 'post') {
    response = valueMap('response', responseValues, []);
    response.getResourceQuotaCurrentUsage = function () { return setup.quotaUsage; };
    response.getMaxResourceQuota = function () { return setup.quotaMax; };
  }

  // ---- the collection: every call is applied now, its callback queued
  function call(operation, args) {
    return parse(host(operation, stringify(args)));
  }

  // (options, callback) with either left out.
  function optionsAndCallback(options, callback) {
    if (typeof options === 'function' && callback === undefined) return [{}, options];
    if (options !== undefined && options !== null && typeof options !== 'object') {
      throw scriptError(400, 'The options argument must be an object.');
    }
    if (callback !== undefined && callback !== null && typeof callback !== 'function') {
      throw scriptError(400, 'The callback argument must be a function.');
    }
    return [options || {}, callback || null];
  }

  // Runs an operation; false when the execution is near its time bound
  // (the call is not accepted and its callback never runs).
  function submit(operation, args, callback, deleteShape) {
    const result = call(operation, args);
    if (result.notAccepted) return false;
    queue.push(function () {
      if (result.error) {
        const error = requestError(result.error);
        if (!callback) throw error;
        if (deleteShape) callback.call(collection, error, {});
        else callback.call(collection, error, undefined, {});
        return;
      }
      if (!callback) return;
      if (deleteShape) callback.call(collection, undefined, result.options || {});
      else callback.call(collection, undefined, result.resource, result.options || {});
    });
    return true;
  }

  const collection = {
    getSelfLink: function () { return setup.selfLink; },
    getAltLink: function () { return setup.altLink; },
    readDocument: function (link, options, callback) {
      const oc = optionsAndCallback(options, callback);
      return submit('read', { link: link, options: oc[0] }, oc[1]);
    },
    readDocuments: function (link, options, callback) {
      const oc = optionsAndCallback(options, callback);
      return submit('readFeed', { link: link, options: oc[0] }, oc[1]);
    },
    queryDocuments: function (link, query, options, callback) {
      const oc = optionsAndCallback(options, callback);
      if (typeof query !== 'string' && (query === null || typeof query !== 'object')) {
        throw scriptError(400, 'The query must be a string or an object {query, parameters}.');
      }
      return submit('query', { link: link, query: query, options: oc[0] }, oc[1]);
    },
    createDocument: function (link, body, options, callback) {
      const oc = optionsAndCallback(options, callback);
      return submit('create', { link: link, body: body, options: oc[0] }, oc[1]);
    },
    upsertDocument: function (link, body, options, callback) {
      const oc = optionsAndCallback(options, callback);
      return submit('upsert', { link: link, body: body, options: oc[0] }, oc[1]);
    },
    replaceDocument: function (link, body, options, callback) {
      const oc = optionsAndCallback(options, callback);
      return submit('replace', { link: link, body: body, options: oc[0] }, oc[1]);
    },
    deleteDocument: function (link, options, callback) {
      const oc = optionsAndCallback(options, callback);
      return submit('delete', { link: link, options: oc[0] }, oc[1], true);
    },
  };
  ['readAttachment', 'readAttachments', 'queryAttachments', 'createAttachment',
    'upsertAttachment', 'replaceAttachment', 'deleteAttachment'].forEach(function (name) {
    collection[name] = function () {
      throw scriptError(400, name + ' is not supported: this emulator keeps no attachments.');
    };
  });

  // ---- __: the JavaScript query API, over the partition's items
  function Query(steps) { this.steps = steps; }
  function step(kind) {
    return function (fn, second) {
      if (kind !== 'flatten' && kind !== 'pluck' && typeof fn !== 'function') {
        throw scriptError(400, kind + ' expects a function.');
      }
      return new Query(this.steps.concat([{ kind: kind, fn: fn, second: second }]));
    };
  }
  Query.prototype = {
    filter: step('filter'),
    map: step('map'),
    pluck: step('pluck'),
    sortBy: step('sortBy'),
    sortByDescending: step('sortByDescending'),
    flatten: step('flatten'),
    unwind: step('unwind'),
    value: function (options, callback) {
      const oc = optionsAndCallback(options, callback);
      return runQuery(this.steps, oc[0], oc[1]);
    },
  };

  function compare(a, b) {
    if (a === b) return 0;
    if (a === undefined) return -1;
    if (b === undefined) return 1;
    return a < b ? -1 : a > b ? 1 : 0;
  }

  function applySteps(docs, steps) {
    let rows = docs;
    steps.forEach(function (s) {
      switch (s.kind) {
        case 'filter': rows = rows.filter(function (d) { return s.fn(d); }); break;
        case 'map': rows = rows.map(function (d) { return s.fn(d); }); break;
        case 'pluck': rows = rows.map(function (d) { return d === null || d === undefined ? undefined : d[s.fn]; }); break;
        case 'sortBy':
        case 'sortByDescending': {
          const sign = s.kind === 'sortBy' ? 1 : -1;
          const keyed = rows.map(function (d, i) { return { d: d, k: s.fn(d), i: i }; });
          keyed.sort(function (a, b) { return sign * compare(a.k, b.k) || a.i - b.i; });
          rows = keyed.map(function (x) { return x.d; });
          break;
        }
        case 'flatten':
          rows = rows.reduce(function (out, d) {
            if (Array.isArray(d)) return out.concat(s.fn ? d : d.flat(Infinity));
            out.push(d);
            return out;
          }, []);
          break;
        case 'unwind':
          rows = rows.reduce(function (out, d) {
            const inner = s.fn(d);
            if (Array.isArray(inner)) {
              inner.forEach(function (x) { out.push(s.second ? s.second(d, x) : x); });
            }
            return out;
          }, []);
          break;
      }
    });
    return rows;
  }

  function runQuery(steps, options, callback) {
    if (!callback && setup.trigger === 'pre') {
      throw scriptError(400, 'The callback function must be provided for scenarios, such as pre-trigger, where the response body cannot be set.');
    }
    const result = call('all', { options: options });
    if (result.notAccepted) return { isAccepted: false };
    queue.push(function () {
      if (result.error) {
        const error = requestError(result.error);
        if (!callback) throw error;
        callback.call(collection, error, undefined, {});
        return;
      }
      const rows = applySteps(result.resources, steps);
      const size = options.pageSize > 0 ? options.pageSize : rows.length || 1;
      const start = options.continuation ? parseInt(options.continuation, 10) || 0 : 0;
      const page = rows.slice(start, start + size);
      const next = start + size < rows.length ? String(start + size) : undefined;
      if (!callback) {
        response.appendBody(stringify(page));
        return;
      }
      callback.call(collection, undefined, page, { continuation: next });
    });
    return { isAccepted: true };
  }

  const __ = Object.create(collection);
  __.chain = function () { return new Query([]); };
  ['filter', 'map', 'pluck', 'sortBy', 'sortByDescending', 'flatten', 'unwind'].forEach(function (name) {
    __[name] = function (fn, a, b, c) {
      // __.filter(fn, [options], [callback]); unwind takes a second selector.
      const query = Query.prototype[name].call(new Query([]), fn, name === 'unwind' && typeof a === 'function' && typeof b !== 'undefined' ? a : undefined);
      const rest = name === 'unwind' && typeof a === 'function' && typeof b !== 'undefined' ? [b, c] : [a, b];
      return query.value(rest[0], rest[1]);
    };
  });
  __.value = function () { return new Query([]).value.apply(new Query([]), arguments); };
  __.request = request;
  __.response = response;
  global.__ = __;

  // ---- the context
  const context = {
    getCollection: function () { return collection; },
    getRequest: function () { return request; },
    getResponse: function () {
      if (!response) throw scriptError(400, 'getResponse is not available in a pre-trigger.');
      return response;
    },
    abort: function (error) {
      aborted = { value: error };
      throw ABORT;
    },
  };
  global.getContext = function () { return context; };

  function describe(thrown) {
    return errors.describe(thrown === ABORT && aborted ? aborted.value : thrown);
  }

  let failure = null;
  function guard(fn) {
    try {
      fn();
      return true;
    } catch (e) {
      failure = describe(e);
      return false;
    }
  }

  return {
    // Calls the script's function with the request's arguments.
    start: function (fn, argsJson) {
      return guard(function () {
        if (typeof fn !== 'function') {
          throw new TypeError('The script is not a function: its body must be a function expression, e.g. function () { ... }.');
        }
        const args = argsJson === undefined ? [] : parse(argsJson);
        const result = Function.prototype.apply.call(fn, global, args);
        // A promise's rejection is left unhandled, as the service leaves it;
        // getContext().abort(err) is how a promise fails an execution.
        if (result && typeof result.then === 'function') result.then(undefined, function () {});
      });
    },
    // Runs the next queued callback; false once there is none (or it failed).
    step: function () {
      if (failure || aborted || queue.length === 0) return false;
      return guard(queue.shift());
    },
    // The outcome, as JSON: a failure, or the bodies and the log.
    finish: function () {
      if (!failure && aborted) failure = describe(ABORT);
      if (failure) return stringify({ failure: failure, log: log });
      let body;
      try {
        body = setup.kind === 'sproc' ? stringify(responseValues.Body) : stringify(requestValues.Body);
      } catch (e) {
        return stringify({ failure: describe(e), log: log });
      }
      return stringify({ body: body === undefined ? null : body, log: log });
    },
  };
})
