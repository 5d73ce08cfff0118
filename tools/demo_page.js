/* A demo page's front end (tools/demo_page.py builds the page around it): no JupyterLite, no
   kernel. Python (Pyodide) runs the demo's cells in this page; the widgets they make are drawn by
   @jupyter-widgets/html-manager; their messages go straight between the two
   (tools/widget_bridge.py on the Python side). Every download the app needs starts at once - the
   runtime, its memory snapshot, the widget manager - so none waits for another; the demo's
   module files (one zip, just what it imports) only once the app is on screen. */
(function () {
  "use strict";
  var config = JSON.parse(document.getElementById("demo-config").textContent);
  var status = document.getElementById("demo-status");
  // where the time goes, in seconds since the page was asked for: read by `python -m bench site`
  var marks = (window.demoMarks = {});
  function mark(name) {
    if (!(name in marks)) marks[name] = performance.now() / 1000;
  }
  function say(text) {
    status.textContent = text;
  }
  function fail(text) {
    var box = document.createElement("div");
    box.className = "course-runtime-error";
    box.setAttribute("role", "alert");
    box.textContent = text;
    document.body.insertBefore(box, document.body.firstChild);
    status.textContent = "";
    window.demoFailed = text;
  }
  function fetched(url) {
    return fetch(url).then(function (r) {
      if (!r.ok) throw new Error(url + ": HTTP " + r.status);
      return r.arrayBuffer();
    });
  }
  // scripts fetched in parallel, run in this order (marked and Pyodide before require.js: with an
  // AMD loader present they would register as modules instead of globals)
  function scripts(urls) {
    return Promise.all(
      urls.map(function (url) {
        return new Promise(function (resolve, reject) {
          var s = document.createElement("script");
          s.src = url;
          s.async = false;
          s.onload = resolve;
          s.onerror = function () {
            reject(new Error("could not load " + url));
          };
          document.head.appendChild(s);
        });
      })
    );
  }

  if (typeof loadPyodide !== "function") {
    fail(
      "Python cannot start on this page: the Pyodide runtime could not be loaded from " +
        new URL(config.pyodide, document.baseURI).href +
        " (no network?). " + config.offlineHint
    );
    return;
  }
  // a warm interpreter (tools/memory_snapshot.py): restored, not started and importing
  // gzipped (tools/demo_page.py): inflated as it arrives, no server support needed
  var snapshot = fetch(config.snapshot).then(function (r) {
    if (!r.ok) throw new Error(config.snapshot + ": HTTP " + r.status);
    return new Response(r.body.pipeThrough(new DecompressionStream("gzip"))).arrayBuffer();
  }).then(function (memory) {
    mark("snapshot fetched");
    return memory;
  });
  var python = loadPyodide({ indexURL: config.indexURL, stdLibURL: config.stdLibURL, _loadSnapshot: snapshot }).then(
    function (py) {
      mark("runtime ready");
      return py;
    }
  );
  var widgets = scripts([config.marked, config.requirejs, config.widgets]).then(function () {
    return new Promise(function (resolve, reject) {
      window.requirejs(["@jupyter-widgets/html-manager"], resolve, reject);
    });
  });

  Promise.all([python.catch(function (e) {
    throw new Error("the Pyodide runtime did not start (" + e + "). " + config.offlineHint);
  }), widgets]).then(function (loaded) {
    var py = loaded[0];
    var lib = loaded[1];
    mark("widget manager loaded");
    say("Starting the simulator...");
    var bridge = py.pyimport("widget_bridge");
    var manager = new lib.HTMLManager();
    // the reveal's explanations are markdown (text/markdown outputs)
    manager.renderMime = manager.renderMime.clone({
      markdownParser: { render: function (text) { return marked.parse(text); } },
    });
    var comms = {};
    var opening = [];
    function Comm(id, target) {
      this.comm_id = id;
      this.target_name = target;
      this.queue = [];
      this.callback = null;
    }
    // a message can arrive before the model that listens to it exists (Python runs a whole cell
    // before the manager builds anything): kept until then
    Comm.prototype.on_msg = function (callback) {
      this.callback = callback;
      this.queue.splice(0).forEach(callback);
    };
    Comm.prototype.on_close = function () {};
    Comm.prototype.deliver = function (msg) {
      if (this.callback) this.callback(msg);
      else this.queue.push(msg);
    };
    Comm.prototype.send = function (data, callbacks) {
      // a kernel says "idle" once it has handled a message, and a widget sends a value's next
      // change only after that (ipywidgets' throttle): without it a box ticks in Python once, and
      // never again. Said after this returns: the model counts the message as pending only then.
      var status = callbacks && callbacks.iopub && callbacks.iopub.status;
      if (status) {
        Promise.resolve().then(function () {
          status({ content: { execution_state: "idle" } });
        });
      }
      bridge.receive(this.comm_id, JSON.stringify(data));  // runs the click's Python now
      return this.comm_id;
    };
    Comm.prototype.close = function () {};
    Comm.prototype.open = function () {};
    bridge.connect(function (text, buffers) {
      var msg = JSON.parse(text);
      var views = buffers && buffers.toJs ? buffers.toJs() : [];
      if (buffers && buffers.destroy) buffers.destroy();
      msg.buffers = views.map(function (b) { return new DataView(b.buffer, b.byteOffset, b.byteLength); });
      var id = msg.content.comm_id;
      if (msg.msg_type === "comm_open") {
        comms[id] = new Comm(id, msg.content.target_name);
        opening.push(manager.handle_comm_open(comms[id], msg));
      } else if (msg.msg_type === "comm_msg" && comms[id]) {
        comms[id].deliver(msg);
      }
    });
    var namespace = py.globals.get("dict")();
    var outputs = document.querySelectorAll(".demo-output");
    function run(source, area) {
      var shown = [];
      try {
        JSON.parse(bridge.run_cell(source, namespace)).forEach(function (out) {
          if (out.widget) shown.push(out.widget);
          else {
            var pre = document.createElement("pre");
            pre.textContent = out.text;
            area.appendChild(pre);
          }
        });
      } catch (error) {
        var pre = document.createElement("pre");
        pre.className = "demo-error";
        pre.textContent = String(error);
        area.appendChild(pre);
      }
      return shown;
    }
    function draw(shown, area) {
      return Promise.all(opening).then(function () {
        return Promise.all(
          shown.map(function (id) {
            return manager.get_model(id).then(function (model) {
              return manager.create_view(model).then(function (view) {
                return manager.display_view(view, area);
              });
            });
          })
        );
      });
    }
    // the page's next frame, drawn before Python runs the next cell
    function frame() {
      return new Promise(function (resolve) {
        requestAnimationFrame(function () { setTimeout(resolve, 0); });
      });
    }
    // cell by cell, each one's widgets drawn before the next runs: the app is on screen (and can
    // be clicked) while the cells after it (a prediction's hidden run...) still run
    return config.cells.reduce(function (previous, source, i) {
      return previous.then(function () {
        var shown = run(source, outputs[i]);
        mark("cell " + (i + 1) + " ran");
        return draw(shown, outputs[i]).then(function () {
          if (shown.length) mark("cell " + (i + 1) + "'s widgets on screen");
          return frame();
        });
      });
    }, Promise.resolve()).then(function () {
      mark("app on screen");
      say("");
      document.body.classList.add("demo-ready");
      // the snapshot holds every module the demo imports, not their files: fetched and written
      // once the app is up, for what only reads a file later (a data file, a traceback's
      // source), a slice at a time when the page is idle (or 0.2 s on) - all at once kept a first
      // click waiting
      function idle(callback) {
        if (window.requestIdleCallback) window.requestIdleCallback(callback, { timeout: 200 });
        else setTimeout(callback, 0);
      }
      return fetched(config.bundle).then(function (zip) {
        mark("modules fetched");
        var archive = "/tmp/demo-modules.zip";
        var target = py.runPython("import site; site.getsitepackages()[0]");
        py.FS.writeFile(archive, new Uint8Array(zip));
        idle(function slice() {
          if (bridge.unpack(archive, target, 50)) mark("modules unpacked");
          else idle(slice);
        });
      });
    });
  }).catch(function (error) {
    fail("Python cannot start on this page: " + (error && error.message ? error.message : error));
  });
})();
