// Interactive API docs: Swagger UI over the service's own OpenAPI document.
// Try-it-now calls carry X-Try-It-Now: 1 so the service answers them with
// Cache-Control: no-store (D14). No validator, no CDN: nothing leaves this host.
window.addEventListener("load", function () {
  window.ui = SwaggerUIBundle({
    url: "../openapi.json",
    dom_id: "#swagger-ui",
    deepLinking: true,
    tryItOutEnabled: true,
    validatorUrl: null,
    requestInterceptor: function (req) {
      req.headers["X-Try-It-Now"] = "1";
      return req;
    },
  });
});
