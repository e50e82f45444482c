// Admin area behaviour, loaded as a file so the Content-Security-Policy can
// forbid inline script. Copy buttons: <button data-copy="element-id">.
document.addEventListener("click", function (event) {
  var button = event.target.closest("button[data-copy]");
  if (!button) return;
  var text = document.getElementById(button.getAttribute("data-copy")).textContent;
  navigator.clipboard.writeText(text).then(function () {
    button.textContent = "Copied";
  }, function () {
    button.textContent = "Select and copy manually";
  });
});
