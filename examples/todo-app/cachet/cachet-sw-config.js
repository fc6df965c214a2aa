// The Service Worker's route table for the example app.
self.CACHET_ROUTES = {
  passThrough: ["/api/login", "/api/logout", "/api/refresh", "/api/me"],
  getPrefixes: ["/api/"]
};
