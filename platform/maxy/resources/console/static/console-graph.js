// The node page's picture of its neighbourhood: fetched as JSON from the same server and drawn
// by cytoscape on a canvas (names are drawn as text, never parsed as HTML). Without JavaScript,
// or without the library, the page keeps its table.
(function () {
  "use strict";

  function draw(box, data) {
    var elements = [];
    data.nodes.forEach(function (n) {
      elements.push({ group: "nodes", data: { id: n.id, title: n.title, label: n.label, center: n.center ? 1 : 0 } });
    });
    data.edges.forEach(function (e, i) {
      elements.push({ group: "edges", data: { id: "e" + i, source: e.source, target: e.target, type: e.type } });
    });
    box.hidden = false;
    var cy = window.cytoscape({
      container: box,
      elements: elements,
      wheelSensitivity: 0.3,
      minZoom: 0.2,
      maxZoom: 1.5,
      style: [
        { selector: "node", style: { "label": "data(title)", "font-size": 10, "text-valign": "bottom", "text-margin-y": 4,
          "background-color": "#5b6b86", "width": 18, "height": 18, "color": "#1d2330", "text-wrap": "ellipsis", "text-max-width": 140 } },
        { selector: "node[center = 1]", style: { "background-color": "#2456a6", "width": 28, "height": 28, "font-weight": "bold" } },
        { selector: "edge", style: { "width": 1.4, "line-color": "#9aa6b8", "target-arrow-color": "#9aa6b8",
          "target-arrow-shape": "triangle", "curve-style": "bezier", "label": "data(type)", "font-size": 8, "color": "#5d6675",
          "text-rotation": "autorotate" } }
      ],
      layout: { name: data.nodes.length > 60 ? "concentric" : "cose", animate: false, padding: 20 }
    });
    var hops = new URL(box.dataset.src, window.location.href).searchParams.get("hops") || "1";
    cy.on("tap", "node", function (event) {
      var id = event.target.id();
      if (id !== box.dataset.node) {
        window.location.assign("/console/node/" + encodeURIComponent(id) + "?hops=" + encodeURIComponent(hops));
      }
    });
    box.dataset.count = String(cy.nodes().length);
    box.dataset.edges = String(cy.edges().length);
    window.maxyGraph = cy;
  }

  function start() {
    var box = document.getElementById("graph");
    if (!box || typeof window.cytoscape !== "function") {
      return;
    }
    fetch(box.dataset.src, { credentials: "same-origin", headers: { "Accept": "application/json" } })
      .then(function (response) {
        if (!response.ok) { throw new Error("graph: HTTP " + response.status); }
        return response.json();
      })
      .then(function (data) { draw(box, data); })
      .catch(function (err) {
        box.hidden = true;
        box.dataset.error = String(err);
      });
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
