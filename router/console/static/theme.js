// Applies the saved light/dark choice before the page paints.
(function () {
  try {
    var t = localStorage.getItem("hebb-theme");
    if (t === "light" || t === "dark") document.documentElement.dataset.theme = t;
  } catch (e) { /* storage off: follow the system */ }
})();
