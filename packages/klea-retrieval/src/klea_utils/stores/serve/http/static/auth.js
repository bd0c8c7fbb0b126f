// klea-serve page: the access token, for a server started with one. Loaded before app.js,
// it wraps window.fetch for the page's own /api calls: it sends the token kept in this
// tab's sessionStorage as "Authorization: Bearer", and on a 401 asks for the token once
// (a modal form, shared by the calls waiting for it), keeps it, and repeats the call.
// The rest of the page calls fetch as usual. Escape gives up: the call answers its 401.
"use strict";

(() => {
  const KEY = "klea-serve-token";
  const plainFetch = window.fetch.bind(window);
  let asking = null;

  function askToken(message) {
    if (asking) return asking;
    asking = new Promise((resolve) => {
      const dialog = document.createElement("dialog");
      dialog.id = "token-dialog";
      const form = document.createElement("form");
      const label = document.createElement("label");
      label.htmlFor = "token-input";
      label.textContent = message;
      const input = document.createElement("input");
      Object.assign(input, { id: "token-input", type: "password", autocomplete: "off", required: true });
      const button = document.createElement("button");
      button.type = "submit";
      button.textContent = "Use this token";
      form.append(label, " ", input, " ", button);
      dialog.append(form);
      document.body.append(dialog);
      const finish = (token) => {
        if (dialog.open) dialog.close();
        dialog.remove();
        asking = null;
        resolve(token);
      };
      form.addEventListener("submit", (event) => {
        event.preventDefault();
        const token = input.value.trim();
        if (token) { sessionStorage.setItem(KEY, token); finish(token); }
      });
      dialog.addEventListener("cancel", () => finish(null));
      dialog.showModal();
      input.focus();
    });
    return asking;
  }

  function isOwnApi(input) {
    if (typeof input !== "string" && !(input instanceof URL)) return false;
    const url = new URL(String(input), location.href);
    return url.origin === location.origin && url.pathname.startsWith("/api/");
  }

  function withToken(init, token) {
    const headers = new Headers((init && init.headers) || {});
    if (token) headers.set("Authorization", `Bearer ${token}`);
    return { ...init, headers };
  }

  window.fetch = async (input, init) => {
    if (!isOwnApi(input)) return plainFetch(input, init);
    let token = sessionStorage.getItem(KEY);
    let response = await plainFetch(input, withToken(init, token));
    while (response.status === 401) {
      const stored = sessionStorage.getItem(KEY);
      if (stored !== null && stored !== token) {
        token = stored; // another call was answered a new token meanwhile
      } else {
        const wrong = token !== null;
        if (wrong) sessionStorage.removeItem(KEY);
        token = await askToken(wrong ? "That token was refused; the access token:"
          : "This klea-serve needs its access token:");
        if (token === null) return response;
      }
      response = await plainFetch(input, withToken(init, token));
    }
    return response;
  };
})();
