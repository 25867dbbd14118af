// /docs: Swagger UI reading the server's own OpenAPI document. "Try it out" sends requests
// from this page, with the token given under "Authorize" (kept only while the page is open).
"use strict";
window.addEventListener("DOMContentLoaded", () => {
  window.SwaggerUIBundle({
    url: "/openapi.json",
    dom_id: "#swagger-ui",
    deepLinking: true,
    docExpansion: "list",
    tryItOutEnabled: false,
    persistAuthorization: false,
  });
});
