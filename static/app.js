// Progressive enhancement only: the page works without it. Choosing a free
// slot fills the booking form in place instead of reloading the page.
document.addEventListener('click', (event) => {
  const slot = event.target.closest('a.free');
  if (!slot) return;
  const url = new URL(slot.href);
  const form = document.querySelector('#book form');
  if (!form) return;
  event.preventDefault();
  form.querySelector('#start').value = url.searchParams.get('start');
  form.querySelector('#end').value = url.searchParams.get('end');
  form.querySelector('#date').value = url.searchParams.get('date');
  const room = url.searchParams.get('room');
  form.querySelectorAll('input[name=rooms]').forEach((box) => { box.checked = box.value === room; });
  form.querySelector('#title').focus();
});
