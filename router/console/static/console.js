// hebb console: small enhancements over pages that work without scripts.
"use strict";

(function () {
  var root = document.documentElement;

  // Light or dark: follow the system until the person picks.
  function currentTheme() {
    if (root.dataset.theme) return root.dataset.theme;
    return window.matchMedia("(prefers-color-scheme: dark)").matches ? "dark" : "light";
  }
  document.querySelectorAll("[data-theme-toggle]").forEach(function (b) {
    b.addEventListener("click", function () {
      var next = currentTheme() === "dark" ? "light" : "dark";
      root.dataset.theme = next;
      try { localStorage.setItem("hebb-theme", next); } catch (e) { /* ignore */ }
    });
  });

  // Copy buttons: data-copy names the element whose text is copied.
  document.querySelectorAll("[data-copy]").forEach(function (b) {
    b.addEventListener("click", function () {
      var el = document.querySelector(b.dataset.copy);
      if (!el || !navigator.clipboard) return;
      navigator.clipboard.writeText(el.textContent.trim()).then(function () {
        var label = b.querySelector("span");
        if (!label) return;
        var old = label.textContent;
        label.textContent = "Copied";
        setTimeout(function () { label.textContent = old; }, 1500);
      });
    });
  });

  // Forms with data-confirm ask first, in a dialog; the confirmation is
  // sent along as confirm=yes (without scripts the server asks instead).
  var dialog = document.getElementById("confirm-dialog");
  document.querySelectorAll("form[data-confirm]").forEach(function (form) {
    form.addEventListener("submit", function (ev) {
      if (form.dataset.confirmed === "1" || !dialog || !dialog.showModal) return;
      ev.preventDefault();
      dialog.querySelector("[data-confirm-text]").textContent = form.dataset.confirm;
      dialog.returnValue = "";
      dialog.showModal();
      dialog.querySelector("[data-confirm-ok]").focus();
      dialog.addEventListener("close", function onClose() {
        dialog.removeEventListener("close", onClose);
        if (dialog.returnValue !== "ok") return;
        var input = document.createElement("input");
        input.type = "hidden";
        input.name = "confirm";
        input.value = "yes";
        form.appendChild(input);
        form.dataset.confirmed = "1";
        form.requestSubmit ? form.requestSubmit() : form.submit();
      });
    });
  });

  // Filters that apply on change.
  document.querySelectorAll("[data-autosubmit]").forEach(function (el) {
    el.addEventListener("change", function () {
      var f = el.form;
      if (f) f.requestSubmit ? f.requestSubmit() : f.submit();
    });
  });

  // Infinite feed: when the "Load more" row comes into view, fetch the next
  // page as a fragment and put it in place of the row.
  var feed = document.querySelector("[data-feed]");
  if (!feed || !("IntersectionObserver" in window)) return;
  var loading = false;
  var observer = new IntersectionObserver(function (entries) {
    entries.forEach(function (e) {
      if (e.isIntersecting) loadMore(e.target);
    });
  }, { rootMargin: "400px" });
  function watch() {
    var more = feed.querySelector("[data-next]");
    if (more) observer.observe(more);
  }
  function loadMore(more) {
    if (loading) return;
    loading = true;
    observer.unobserve(more);
    more.setAttribute("aria-busy", "true");
    fetch(more.dataset.next, { headers: { "X-Requested-With": "fetch" }, credentials: "same-origin" })
      .then(function (r) {
        // A session that ended meanwhile is sent to the sign-in page:
        // go there rather than put that page into the feed.
        if (r.redirected) { window.location.assign(r.url); throw new Error("signed out"); }
        if (!r.ok) throw new Error(r.status);
        return r.text();
      })
      .then(function (html) {
        var tpl = document.createElement("template");
        tpl.innerHTML = html;
        more.replaceWith(tpl.content);
        loading = false;
        watch();
      })
      .catch(function () { more.removeAttribute("aria-busy"); loading = false; });
  }
  watch();
})();
