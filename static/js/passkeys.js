// After the browser registers a passkey (django-otp-webauthn's script fires the event), go to the
// page that finishes enrolment: its URL is the data-done-url of #passkey-enrolment.
document.addEventListener("otp_webauthn.register_complete", () => {
  const box = document.getElementById("passkey-enrolment");
  if (box && box.dataset.doneUrl) {
    window.location.assign(box.dataset.doneUrl);
  }
});
