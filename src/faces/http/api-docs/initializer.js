// Renders this service's /openapi.json with Swagger UI. A file of its own rather than an inline
// script, so the page's Content-Security-Policy can forbid inline scripts.
window.addEventListener('load', function () {
  window.ui = SwaggerUIBundle({
    url: '/openapi.json',
    dom_id: '#swagger-ui',
    deepLinking: true,
    // The default validator is a third-party service the document would be sent to.
    validatorUrl: null,
    presets: [SwaggerUIBundle.presets.apis],
    layout: 'BaseLayout',
  });
});
