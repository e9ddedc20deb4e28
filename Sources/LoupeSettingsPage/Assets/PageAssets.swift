#if SettingsPage
/// The page itself: one HTML document with its style and script inline, served as it is (no build step,
/// nothing from another origin). The script fetches the settings from the page's API and renders them
/// with the DOM's own methods (text is never parsed as HTML).
enum PageAssets {
    /// The page.
    static let html = """
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <meta name="referrer" content="no-referrer">
        <title>Settings</title>
        <style>\(style)</style>
        </head>
        <body>
        <a class="skip" href="#main">Skip to the settings</a>
        <header>
          <h1 id="title">Settings</h1>
          <p id="store" class="muted"></p>
          <p id="live" role="status" aria-live="polite" class="live">Connecting…</p>
        </header>
        <nav aria-label="Views">
          <button type="button" id="tab-settings" aria-controls="main" aria-pressed="true">Settings</button>
          <button type="button" id="tab-history" aria-controls="history" aria-pressed="false">History</button>
          <button type="button" id="tab-fleet" aria-controls="fleet" aria-pressed="false" hidden>Fleet</button>
        </nav>
        <div id="problem" role="alert" class="problem" hidden></div>
        <main id="main" tabindex="-1">
          <p><label for="filter">Filter settings</label>
          <input id="filter" type="search" placeholder="path or description" autocomplete="off"></p>
          <section id="dictionary" aria-labelledby="dictionary-title" hidden>
            <h2 id="dictionary-title">Entries</h2>
            <ul id="dictionary-keys"></ul>
            <div id="new-entry"></div>
            <p id="dictionary-status" role="status" aria-live="polite" class="message"></p>
          </section>
          <div id="groups"></div>
        </main>
        <section id="history" aria-labelledby="history-title" hidden>
          <h2 id="history-title" tabindex="-1">History</h2>
          <p id="history-note" class="muted"></p>
          <p id="history-status" role="status" aria-live="polite" class="message"></p>
          <ol id="changes" reversed></ol>
        </section>
        <section id="fleet" aria-labelledby="fleet-title" hidden>
          <h2 id="fleet-title" tabindex="-1">Rollout across the fleet</h2>
          <p id="fleet-note"></p>
          <table><thead><tr><th scope="col">Host</th><th scope="col">Revision</th><th scope="col">Seen</th><th scope="col">Refused</th></tr></thead>
          <tbody id="readers"></tbody></table>
        </section>
        <script>\(script)</script>
        </body>
        </html>
        """

    /// The page shown for a request refused before the page itself (no token, a wrong one).
    static func refusal(_ message: String) -> String {
        let escaped = message.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;")
        return """
            <!doctype html><html lang="en"><head><meta charset="utf-8">\
            <meta name="viewport" content="width=device-width, initial-scale=1"><title>Settings: not allowed</title></head>\
            <body><h1>Not allowed</h1><p role="alert">\(escaped)</p></body></html>
            """
    }

    static let style = """
        :root { color-scheme: light dark; --accent: #0b57d0; --error: #b3261e; --ok: #146c2e; --muted: #5f6368; --line: #c4c7c5; }
        @media (prefers-color-scheme: dark) { :root { --accent: #a8c7fa; --error: #f2b8b5; --ok: #6dd58c; --muted: #a0a4a8; --line: #444746; } }
        * { box-sizing: border-box; }
        body { font: 16px/1.45 system-ui, sans-serif; margin: 0 auto; padding: 0 1rem 3rem; max-width: 60rem; }
        .skip { position: absolute; left: -999px; } .skip:focus { left: 1rem; top: 0.5rem; background: Canvas; padding: 0.3rem 0.6rem; border-radius: 0.3rem; z-index: 1; }
        header { padding-top: 1rem; } h1 { margin: 0.2rem 0; font-size: 1.6rem; }
        h2 { font-size: 1.2rem; margin: 1.5rem 0 0.3rem; border-bottom: 1px solid var(--line); padding-bottom: 0.2rem; }
        .muted, .meta, .source { color: var(--muted); font-size: 0.9rem; }
        .live::before { content: "● "; } .live.on { color: var(--ok); } .live.off { color: var(--error); }
        nav { display: flex; gap: 0.5rem; flex-wrap: wrap; margin: 0.5rem 0; }
        button { font: inherit; padding: 0.35rem 0.8rem; border-radius: 0.4rem; border: 1px solid var(--line); background: transparent; color: inherit; cursor: pointer; }
        button[aria-pressed="true"], button.primary { background: var(--accent); color: Canvas; border-color: var(--accent); }
        button:disabled { opacity: 0.5; cursor: default; }
        :focus-visible { outline: 3px solid var(--accent); outline-offset: 2px; }
        input, select, textarea { font: inherit; padding: 0.3rem 0.4rem; border: 1px solid var(--line); border-radius: 0.3rem; max-width: 100%; background: Field; color: FieldText; }
        textarea { width: 100%; min-height: 4rem; font-family: ui-monospace, monospace; }
        .setting { border: 1px solid var(--line); border-radius: 0.5rem; padding: 0.6rem 0.8rem; margin: 0.6rem 0; }
        .setting.locked { border-style: dashed; }
        .setting.changed { border-color: var(--ok); }
        .head { display: flex; flex-wrap: wrap; align-items: baseline; gap: 0.5rem; }
        .head label { font-weight: 600; font-family: ui-monospace, monospace; }
        .badge { font-size: 0.8rem; border: 1px solid var(--line); border-radius: 1rem; padding: 0 0.5rem; }
        .editor { margin: 0.4rem 0; display: flex; flex-wrap: wrap; gap: 0.4rem; align-items: center; }
        .rows { display: flex; flex-direction: column; gap: 0.3rem; width: 100%; }
        .row { display: flex; gap: 0.3rem; flex-wrap: wrap; }
        .actions { display: flex; gap: 0.4rem; flex-wrap: wrap; }
        .message { margin: 0.3rem 0 0; } .message.error, .problem { color: var(--error); } .message.ok { color: var(--ok); }
        .problem { border: 1px solid var(--error); padding: 0.5rem; border-radius: 0.4rem; }
        code, .value { font-family: ui-monospace, monospace; overflow-wrap: anywhere; }
        #changes li { margin: 0.6rem 0; } #changes ul { margin: 0.2rem 0; padding-left: 1.2rem; }
        table { border-collapse: collapse; width: 100%; } th, td { text-align: left; padding: 0.3rem; border-bottom: 1px solid var(--line); }
        @media (max-width: 30rem) { body { padding: 0 0.5rem 2rem; } .setting { padding: 0.5rem; } input[type=text], input[type=search] { width: 100%; } }
        """

    static let script = #"""
        "use strict";
        const token = new URLSearchParams(location.search).get("token") || "";
        const base = location.pathname.replace(/\/+$/, "");
        const $ = (id) => document.getElementById(id);
        // `saved`: the note each setting shows after its last save (kept across the re-renders live updates make).
        const state = { model: null, entries: new Map(), dirty: new Set(), saved: new Map(), ids: new Map(), next: 0 };

        function el(tag, props, ...children) {
          const node = document.createElement(tag);
          for (const [key, value] of Object.entries(props || {})) {
            if (value === undefined || value === null || value === false) continue;
            if (key === "text") node.textContent = value;
            else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
            else if (key in node && key !== "list") node[key] = value;
            else node.setAttribute(key, value === true ? "" : value);
          }
          for (const child of children) if (child) node.append(child);
          return node;
        }
        const json = (value) => JSON.stringify(value);
        function idFor(path) {
          if (!state.ids.has(path)) state.ids.set(path, "s" + (state.next++));
          return state.ids.get(path);
        }

        async function api(method, path, body) {
          const headers = { "X-Loupe-Token": token };
          if (body !== undefined) headers["Content-Type"] = "application/json";
          const response = await fetch(base + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), credentials: "same-origin" });
          const data = await response.json().catch(() => ({ error: response.status + " " + response.statusText }));
          if (!response.ok) { const error = new Error(data.error || response.statusText); error.data = data; error.status = response.status; throw error; }
          return data;
        }

        function describeSource(source) {
          if (source.kind === "default") return "the default";
          if (source.kind === "override") return source.name;
          return source.name;
        }

        // The problems the schema can tell while one types: the server checks the type and the rules on save.
        function constraintProblem(entry, value) {
          const c = entry.constraints || {};
          if (value === null) return entry.nullable ? null : "a value is needed";
          if (typeof value === "number") {
            if (entry.type === "integer" && !Number.isInteger(value)) return "must be a whole number";
            if (c.minimum !== undefined && value < c.minimum) return "must be at least " + c.minimum;
            if (c.maximum !== undefined && value > c.maximum) return "must be at most " + c.maximum;
            if (c.exclusiveMinimum !== undefined && value <= c.exclusiveMinimum) return "must be greater than " + c.exclusiveMinimum;
            if (c.exclusiveMaximum !== undefined && value >= c.exclusiveMaximum) return "must be less than " + c.exclusiveMaximum;
          }
          if (typeof value === "string" && c.pattern !== undefined) {
            try { if (!new RegExp(c.pattern, "u").test(value)) return "must match " + c.pattern; } catch (_) {}
          }
          return null;
        }

        function scalarInput(type, value, attributes) {
          if (type === "boolean") return el("input", Object.assign({ type: "checkbox", checked: value === true }, attributes));
          if (type === "integer" || type === "number") {
            return el("input", Object.assign({ type: "number", step: type === "integer" ? "1" : "any", inputMode: type === "integer" ? "numeric" : "decimal", value: value === null || value === undefined ? "" : String(value) }, attributes));
          }
          return el("input", Object.assign({ type: "text", value: value === null || value === undefined ? "" : String(value), autocomplete: "off", spellcheck: false }, attributes));
        }
        function scalarValue(type, input) {
          if (type === "boolean") return input.checked;
          if (type === "integer" || type === "number") {
            if (input.value.trim() === "") return null;
            const number = Number(input.value);
            if (Number.isNaN(number)) throw new Error("not a number");
            return number;
          }
          return input.value;
        }

        // An editor fit for the type: { node, read() -> value (throws when it cannot be read) }.
        function makeEditor(entry, id, describedBy, onInput) {
          const attributes = { id, "aria-describedby": describedBy, disabled: !entry.editable, oninput: onInput, onchange: onInput };
          const value = entry.value;
          switch (entry.editor) {
            case "toggle": {
              const input = el("input", Object.assign({ type: "checkbox", role: "switch", checked: value === true }, attributes));
              return { node: input, read: () => input.checked };
            }
            case "number": {
              const c = entry.constraints || {};
              const input = scalarInput(entry.type, value, Object.assign({ min: c.minimum, max: c.maximum }, attributes));
              return { node: input, read: () => { const v = scalarValue(entry.type, input); return v === null && !entry.nullable ? (() => { throw new Error("a value is needed"); })() : v; } };
            }
            case "choice": {
              const select = el("select", attributes);
              if (entry.nullable) select.append(el("option", { value: "null", text: "(none)" }));
              for (const choice of entry.choices) select.append(el("option", { value: json(choice), text: typeof choice === "string" ? choice : json(choice) }));
              select.value = json(value === undefined ? null : value);
              return { node: select, read: () => JSON.parse(select.value) };
            }
            case "text": {
              if (entry.isSecret) {
                const input = el("input", Object.assign({ type: "password", value: "", placeholder: "•••••••• (unchanged)", autocomplete: "off" }, attributes));
                return { node: input, read: () => input.value, secretInput: input };
              }
              const c = entry.constraints || {};
              const input = scalarInput("string", value, Object.assign({ pattern: c.pattern }, attributes));
              return { node: input, read: () => (entry.nullable && input.value === "" ? null : input.value) };
            }
            case "list": case "dictionary": {
              const dictionary = entry.editor === "dictionary";
              const rows = el("div", { className: "rows", role: "group", "aria-labelledby": id + "-label", "aria-describedby": describedBy });
              const addRow = (key, item) => {
                const n = rows.children.length + 1;
                const row = el("div", { className: "row" });
                if (dictionary) row.append(el("input", { type: "text", value: key, "aria-label": "key " + n, className: "key", disabled: !entry.editable, oninput: onInput }));
                row.append(scalarInput(entry.items, item, { "aria-label": (dictionary ? "value " : "item ") + n, className: "item", disabled: !entry.editable, oninput: onInput, onchange: onInput }));
                row.append(el("button", { type: "button", text: "Remove", "aria-label": "remove " + (dictionary ? "entry " : "item ") + n, disabled: !entry.editable, onclick: () => { row.remove(); onInput(); } }));
                rows.append(row);
              };
              if (dictionary) for (const key of Object.keys(value || {}).sort()) addRow(key, value[key]);
              else for (const item of value || []) addRow("", item);
              const add = el("button", { type: "button", text: dictionary ? "Add entry" : "Add item", disabled: !entry.editable, onclick: () => { addRow("", entry.items === "boolean" ? false : null); onInput(); } });
              const node = el("div", { className: "rows" }, rows, add);
              const read = () => {
                const items = [...rows.children].map((row) => [row.querySelector(".key")?.value, scalarValue(entry.items, row.querySelector(".item"))]);
                if (!dictionary) return items.map(([, item]) => item);
                const object = {};
                for (const [key, item] of items) { if (key === "") throw new Error("every entry needs a key"); object[key] = item; }
                return object;
              };
              return { node, read, focus: add };
            }
            default: {
              const area = el("textarea", Object.assign({ value: value === undefined ? "" : JSON.stringify(value, null, 2), spellcheck: false }, attributes));
              return { node: area, read: () => { try { return JSON.parse(area.value); } catch (error) { throw new Error("not JSON: " + error.message); } } };
            }
          }
        }

        function renderSetting(entry) {
          const id = idFor(entry.path);
          const messageId = id + "-message", descriptionId = id + "-description", metaId = id + "-meta";
          const box = el("div", { className: "setting" + (entry.lock ? " locked" : ""), id: id + "-box", "data-path": entry.path });
          const message = el("p", { className: "message", id: messageId, role: "status", "aria-live": "polite" });
          const save = el("button", { type: "button", className: "primary", text: "Save", disabled: true, "aria-label": "Save " + entry.path });
          const check = () => {
            state.dirty.add(entry.path);
            state.saved.delete(entry.path);
            box.classList.add("changed");
            let problem = null;
            try { problem = constraintProblem(entry, editor.read()); } catch (error) { problem = error.message; }
            // A hint while one types; Save still asks the server, which checks the type and the rules and
            // answers with the message `loupe` prints.
            message.className = "message" + (problem ? " error" : "");
            message.textContent = problem ? entry.path + ": " + problem : "";
            if (editor.node.setAttribute) editor.node.setAttribute("aria-invalid", String(!!problem));
            save.disabled = !entry.editable;
          };
          const editor = makeEditor(entry, id, [descriptionId, metaId, messageId].join(" "), check);
          const label = el("label", { htmlFor: id, id: id + "-label", text: entry.path });
          const head = el("div", { className: "head" }, label, el("span", { className: "badge", text: entry.type + (entry.nullable ? "?" : "") }));
          if (entry.isSecret) head.append(el("span", { className: "badge", text: "secret" }));
          if (entry.lock) head.append(el("span", { className: "badge", text: "locked" }));
          box.append(head);
          if (entry.description) box.append(el("p", { id: descriptionId, text: entry.description }));
          const meta = el("p", { className: "meta", id: metaId });
          const parts = [];
          parts.push("From " + describeSource(entry.source) + (entry.line ? " line " + entry.line : "") + (entry.overrides.length ? " (overrides " + entry.overrides.map(describeSource).join(", ") + ")" : ""));
          if (entry.lock) parts.push("Locked by " + entry.lock.file + " line " + entry.lock.line + ": read-only here");
          if (entry.default !== undefined) parts.push("Default " + json(entry.default));
          if (entry.choices) parts.push("Allowed: " + entry.choices.map((c) => (typeof c === "string" ? c : json(c))).join(", "));
          const c = entry.constraints || {};
          if (c.minimum !== undefined) parts.push("at least " + c.minimum);
          if (c.exclusiveMinimum !== undefined) parts.push("greater than " + c.exclusiveMinimum);
          if (c.maximum !== undefined) parts.push("at most " + c.maximum);
          if (c.exclusiveMaximum !== undefined) parts.push("less than " + c.exclusiveMaximum);
          if (c.pattern !== undefined) parts.push("matching " + c.pattern);
          if (entry.isSecret) parts.push("Current value " + (entry.value === undefined ? "(none)" : json(entry.value)));
          meta.textContent = parts.join(" · ");
          box.append(el("div", { className: "editor" }, editor.node), meta);
          const actions = el("div", { className: "actions" });
          if (entry.editable) {
            actions.append(save);
            save.addEventListener("click", () => submit(entry, editor, message, entry.isSecret ? undefined : entry.value));
            if (entry.reset === "default") actions.append(el("button", { type: "button", text: "Reset to default", "aria-label": "Reset " + entry.path + " to its default", onclick: () => resetSetting(entry, message) }));
            if (entry.reset === "remove") actions.append(el("button", { type: "button", text: "Remove", "aria-label": "Remove " + entry.path, onclick: () => resetSetting(entry, message) }));
          }
          if (entry.isSecret && state.model.revealsSecrets) {
            actions.append(el("button", { type: "button", text: "Reveal", "aria-label": "Reveal " + entry.path, onclick: () => reveal(entry, message) }));
          }
          if (actions.children.length) box.append(actions);
          if (state.saved.has(entry.path)) { message.className = "message ok"; message.textContent = state.saved.get(entry.path); }
          box.append(message);
          return box;
        }

        async function submit(entry, editor, message, expected) {
          let value;
          try { value = editor.read(); } catch (error) { message.className = "message error"; message.textContent = entry.path + ": " + error.message; return; }
          message.className = "message"; message.textContent = "Saving…";
          try {
            const body = { path: entry.path, value };
            if (expected !== undefined) body.expected = expected;
            const model = await api("PUT", "/api/value", body);
            state.dirty.delete(entry.path);
            state.saved.set(entry.path, "Saved.");
            apply(model, entry.path);
          } catch (error) {
            message.className = "message error";
            message.textContent = error.message;
            if (error.data && error.data.conflict) {
              const current = error.data.current;
              const again = el("button", { type: "button", text: "Save mine anyway", onclick: () => { again.remove(); submit(entry, editor, message, current); } });
              message.append(" ", again);
            }
          }
        }

        async function resetSetting(entry, message) {
          try {
            const model = await api("DELETE", "/api/value?path=" + encodeURIComponent(entry.path));
            state.dirty.delete(entry.path);
            state.saved.set(entry.path, entry.reset === "remove" ? "Removed." : "Back to its default.");
            apply(model, entry.path);
          } catch (error) { message.className = "message error"; message.textContent = error.message; }
        }

        async function reveal(entry, message) {
          try {
            const data = await api("GET", "/api/reveal?path=" + encodeURIComponent(entry.path));
            message.className = "message"; message.textContent = entry.path + " = " + json(data.value);
          } catch (error) { message.className = "message error"; message.textContent = error.message; }
        }

        // Shows `model`; a setting being edited keeps its edit, and says when its value changed meanwhile.
        function apply(model, forced) {
          state.model = model;
          $("title").textContent = model.title || "Settings";
          document.title = (model.title || "Settings") + " settings";
          $("store").textContent = model.store + (model.readOnly ? " · read-only" : "");
          const groups = $("groups");
          for (const group of model.groups) {
            const groupId = "g-" + idFor("group:" + group.path);
            let section = document.getElementById(groupId);
            if (!section) {
              section = el("section", { id: groupId, "aria-labelledby": groupId + "-h" },
                el("h2", { id: groupId + "-h", text: group.path === "" ? "General" : group.path }));
              if (group.description) section.append(el("p", { className: "muted", text: group.description }));
              groups.append(section);
            }
            for (const entry of group.settings) {
              const previous = state.entries.get(entry.path);
              state.entries.set(entry.path, entry);
              const existing = document.getElementById(idFor(entry.path) + "-box");
              if (existing && state.dirty.has(entry.path) && entry.path !== forced) {
                if (previous && json(previous.value) !== json(entry.value)) {
                  const message = document.getElementById(idFor(entry.path) + "-message");
                  message.className = "message error";
                  message.textContent = entry.path + " changed meanwhile: it is now " + json(entry.value) + ". Saving asks again.";
                }
                continue;
              }
              const fresh = renderSetting(entry);
              if (existing) {
                const focused = existing.contains(document.activeElement) ? document.activeElement.id : null;
                existing.replaceWith(fresh);
                if (focused && document.getElementById(focused)) document.getElementById(focused).focus();
              } else section.append(fresh);
            }
          }
          // Settings gone from the document (a key removed from a file no type describes, an entry
          // removed from a dictionary), and their groups once empty: those a change names, or those a
          // model of every setting does not hold.
          removeSettings(model.removed || []);
          if (model.whole) {
            const shown = new Set(model.groups.flatMap((group) => group.settings.map((setting) => setting.path)));
            removeSettings([...state.entries.keys()].filter((path) => !shown.has(path)));
          }
          if (model.dictionary) renderDictionary(model.dictionary);
          filter();
        }

        function removeSettings(paths) {
          for (const path of paths) {
            const box = document.getElementById(idFor(path) + "-box");
            const section = box && box.closest("section");
            if (box) box.remove();
            state.entries.delete(path);
            state.dirty.delete(path);
            if (section && !section.querySelector(".setting")) section.remove();
          }
        }

        // A key as a path names it: in quotes where it holds . [ ] " \ or a space, or is empty.
        function pathOf(key) {
          return key !== "" && !/[.\[\]"\\ ]/.test(key) ? key : '"' + key.replace(/\\/g, "\\\\").replace(/"/g, '\\"') + '"';
        }

        // A root that is a dictionary: the keys it holds, each with Remove, and a form that adds an entry.
        function renderDictionary(dictionary) {
          $("dictionary").hidden = false;
          const status = $("dictionary-status");
          const editable = dictionary.new.editable;
          const told = (ok, text) => { status.className = "message " + (ok ? "ok" : "error"); status.textContent = text; };
          $("dictionary-keys").replaceChildren(...dictionary.keys.map((entry) => el("li", {}, el("code", { text: entry.key }), " ",
            el("button", { type: "button", text: "Remove", "aria-label": "Remove entry " + entry.key, disabled: !editable, onclick: async () => {
              try {
                const model = await api("DELETE", "/api/value?path=" + encodeURIComponent(entry.path));
                apply(model);
                if (model.dictionary.keys.some((k) => k.key === entry.key)) {
                  told(false, entry.key + " is still there: the defaults or a layer below this file hold it");
                } else {
                  told(true, "Removed " + entry.key + ".");
                }
              } catch (error) { told(false, error.message); }
            } }))));
          if ($("new-entry").children.length) return;
          const key = el("input", { type: "text", id: "new-entry-key", autocomplete: "off", spellcheck: false, disabled: !editable });
          const editor = makeEditor(Object.assign({}, dictionary.new, { path: "new entry" }), "new-entry-value", "dictionary-status", () => {});
          const add = el("button", { type: "button", className: "primary", text: "Add entry", disabled: !editable, onclick: async () => {
            const name = key.value;
            let value;
            if (name === "") { told(false, "the new entry needs a key"); return; }
            try { value = editor.read(); } catch (error) { told(false, name + ": " + error.message); return; }
            if (state.model.dictionary.keys.some((k) => k.key === name)) { told(false, "an entry named " + name + " exists already: edit it below"); return; }
            try {
              apply(await api("PUT", "/api/value", { path: pathOf(name), value, expected: null }));
              key.value = "";
              told(true, "Added " + name + ".");
            } catch (error) { told(false, error.message); }
          } });
          $("new-entry").append(
            el("p", {}, el("label", { htmlFor: "new-entry-key", text: "New entry's key " }), key),
            el("div", { className: "editor" }, el("label", { htmlFor: "new-entry-value", id: "new-entry-value-label", text: "Its value " }), editor.node),
            el("div", { className: "actions" }, add));
        }

        function filter() {
          const text = $("filter").value.trim().toLowerCase();
          for (const [path, entry] of state.entries) {
            const box = document.getElementById(idFor(path) + "-box");
            if (box) box.hidden = text !== "" && !(path.toLowerCase().includes(text) || (entry.description || "").toLowerCase().includes(text));
          }
        }

        async function loadHistory() {
          const list = $("changes");
          try {
            const history = await api("GET", "/api/history");
            list.replaceChildren();
            $("history-note").textContent = history.available === false ? history.reason : history.changes.length ? "Revisions kept: " + history.kept : "No changes recorded yet.";
            const newest = history.changes.length ? history.changes[0].revision : null;
            for (const change of history.changes) {
              const item = el("li", { value: change.revision, "data-revision": change.revision });
              item.append(el("strong", { text: "Revision " + change.revision }), " ",
                el("span", { className: "muted", text: [change.time ? new Date(change.time).toLocaleString() : null, change.author || "an outside edit"].filter(Boolean).join(" · ") }));
              const diff = el("ul");
              for (const p of change.paths) diff.append(el("li", {}, el("code", { text: p.path }), ": ", el("span", { className: "value", text: p.purged ? "(purged)" : (p.old === undefined ? "(none)" : json(p.old)) + " → " + (p.new === undefined ? "(none)" : json(p.new)) })));
              item.append(diff);
              if (!state.model?.readOnly && change.revision !== newest) {
                const status = $("history-status");
                item.append(el("button", { type: "button", text: "Roll back to revision " + change.revision, onclick: async () => {
                  try { apply(await api("POST", "/api/rollback", { revision: change.revision })); status.className = "message ok"; status.textContent = "Rolled back to revision " + change.revision + ": the settings are as it left them."; loadHistory(); }
                  catch (error) { status.className = "message error"; status.textContent = error.message; }
                } }));
              }
              list.append(item);
            }
          } catch (error) { $("history-note").textContent = error.message; }
        }

        async function loadFleet() {
          try {
            const status = await api("GET", "/api/status");
            if (!status) return;
            $("tab-fleet").hidden = false;
            const behind = status.readers.filter((r) => r.revision < status.currentRevision).length;
            $("fleet-note").textContent = "Current revision " + status.currentRevision + "; " + status.readers.length + " hosts, " + behind + " behind.";
            const rows = status.readers.map((r) => el("tr", {}, el("th", { scope: "row", text: r.name }), el("td", { text: String(r.revision) + (r.behind ? " (behind)" : "") }),
              el("td", { text: new Date(r.time).toLocaleString() }), el("td", { text: r.refusal ? "revision " + r.refusal.revision + ": " + r.refusal.reason : "" })));
            $("readers").replaceChildren(...rows);
          } catch (error) { $("fleet-note").textContent = error.message; }
        }

        function show(view) {
          for (const [name, section] of [["settings", "main"], ["history", "history"], ["fleet", "fleet"]]) {
            $("tab-" + name).setAttribute("aria-pressed", String(name === view));
            $(section).hidden = name !== view;
          }
          if (view === "history") { loadHistory(); $("history-title").focus(); }
          if (view === "fleet") { loadFleet(); $("fleet-title").focus(); }
        }
        $("tab-settings").addEventListener("click", () => show("settings"));
        $("tab-history").addEventListener("click", () => show("history"));
        $("tab-fleet").addEventListener("click", () => show("fleet"));
        $("filter").addEventListener("input", filter);

        function listen() {
          const events = new EventSource(base + "/api/events?token=" + encodeURIComponent(token));
          events.addEventListener("open", () => { $("live").textContent = "Live: changes from anywhere appear here"; $("live").className = "live on"; });
          events.addEventListener("settings", (event) => {
            apply(JSON.parse(event.data));
            $("problem").hidden = true;
            if (!$("history").hidden) loadHistory();
            if (!$("tab-fleet").hidden) loadFleet();
          });
          events.addEventListener("problem", (event) => { $("problem").textContent = JSON.parse(event.data).error; $("problem").hidden = false; });
          events.addEventListener("error", () => { $("live").textContent = "Reconnecting…"; $("live").className = "live off"; });
        }

        api("GET", "/api/settings").then((model) => { apply(model); listen(); loadFleet(); document.body.dataset.ready = "true"; })
          .catch((error) => { $("problem").textContent = error.message; $("problem").hidden = false; });
        """#
}
#endif
