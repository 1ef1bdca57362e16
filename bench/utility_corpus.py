"""Utility benchmark corpus: letters, tickets, product news, medical notes and contracts in six languages, with designated ordinary words and planted names."""
# Pure and importable (faker only; no model, no file, no clock): `make_documents(copies)`
# returns the same documents on every machine with the same faker version. Each template is
# written in its language; `[[word]]` designates an ordinary word a reader expects to find
# as written (common nouns, products, drugs, job titles, openers, labels), `{PER}` `{PER2}`
# `{ORG}` `{CITY}` are filled with names from faker's locale for the language (first and
# last name, company, city). The gold is the offsets of both in the rendered text.
from __future__ import annotations

import re
from dataclasses import dataclass

GENRES = ("letter", "ticket", "news", "medical", "contract")
LOCALES = {"en": "en_GB", "de": "de_DE", "fr": "fr_FR", "es": "es_ES", "it": "it_IT",
           "nl": "nl_NL"}

TEMPLATES: dict[str, dict[str, str]] = {
    "en": {
        "letter": "Dear {PER},\n\nThank you for your [[letter]] of 3 March. [[Please]] find the "
                  "signed [[Contract]] attached; the [[Invoice]] follows by post. [[Contact]] "
                  "{PER2} at our {CITY} office if anything is unclear.\n\nKind regards,\n{PER2}",
        "ticket": "[[Subject]]: [[Login]] fails after [[Update]]\n\n[[Hi]] team, since the "
                  "[[Windows]] 11 update the [[Outlook]] app crashes at start. [[Ask]] {PER} "
                  "about the [[VPN]] settings. [[DM]] me if you need the [[Logs]].\n{PER2}",
        "news": "{ORG} unveiled the [[iPhone]] 16 case line on Monday. The [[Chief]] "
                "[[Executive]], {PER}, said the [[Bluetooth]] headphones ship from {CITY} in "
                "[[October]]. [[Analysts]] expect [[Christmas]] sales to rise.",
        "medical": "[[Patient]] {PER} was seen in {CITY} clinic. [[Diagnosis]]: [[Hypertension]]."
                   " [[Started]] on [[metoprolol]] 25 mg twice daily. [[Review]] by "
                   "Dr {PER2} in six weeks.",
        "contract": "This [[Agreement]] is made between {ORG} (\"[[Supplier]]\") and {PER} "
                    "(the \"[[Customer]]\"). The [[Supplier]] shall deliver the [[Goods]] to "
                    "{CITY}. [[Payment]] is due within 30 days of the [[Invoice]].",
    },
    "de": {
        "letter": "Sehr geehrte Frau {PER},\n\nvielen [[Dank]] für Ihr [[Schreiben]] vom 12. Mai. "
                  "[[Hiermit]] teile ich Ihnen mit, dass mein [[Vertrag]] zum 30.06.2025 "
                  "[[gekündigt]] wird. [[Bitte]] bestätigen Sie mir den [[Eingang]] dieser "
                  "[[Kündigung]].\n\nMit freundlichen [[Grüßen]]\n{PER2}",
        "ticket": "[[Betreff]]: [[Drucker]] im [[Büro]] {CITY} defekt\n\n[[Hallo]] zusammen, der "
                  "[[Drucker]] zeigt seit [[Montag]] eine [[Fehlermeldung]]. [[Meine]] "
                  "[[Kollegin]] {PER} hat das [[Gerät]] neu gestartet. [[Danke]] und "
                  "[[Gruß]]\n{PER2}",
        "news": "{ORG} stellt am [[Dienstag]] das neue [[Smartphone]] vor. [[Laut]] "
                "[[Vorstand]] {PER} soll die [[Produktion]] in {CITY} im [[Herbst]] beginnen. "
                "[[Experten]] erwarten steigende [[Umsätze]].",
        "medical": "[[Patientin]] {PER} stellte sich in der [[Praxis]] in {CITY} vor. "
                   "[[Diagnose]]: [[Bluthochdruck]]. [[Therapie]] mit [[Ramipril]] 5 mg. "
                   "[[Kontrolle]] bei Dr. {PER2} in vier [[Wochen]].",
        "contract": "Dieser [[Vertrag]] wird zwischen der {ORG} ([[Auftragnehmer]]) und Herrn "
                    "{PER} ([[Auftraggeber]]) geschlossen. Die [[Lieferung]] erfolgt nach "
                    "{CITY}. Die [[Zahlung]] ist innerhalb von 30 [[Tagen]] fällig.",
    },
    "fr": {
        "letter": "Madame {PER},\n\n[[Suite]] à votre [[courrier]] du 3 mars, je vous "
                  "confirme la [[résiliation]] de mon [[abonnement]]. [[Veuillez]] agréer mes "
                  "salutations distinguées.\n\n{PER2}\n[[Ingénieure]] chez {ORG}",
        "ticket": "[[Objet]] : [[Connexion]] impossible\n\n[[Bonjour]], depuis la [[mise]] à "
                  "jour, l'[[application]] se ferme au [[démarrage]]. [[Mon]] [[collègue]] "
                  "{PER} a le même [[problème]] à {CITY}. [[Merci]] d'avance,\n{PER2}",
        "news": "{ORG} présente son nouveau [[téléphone]] mardi. [[Selon]] le [[directeur]] "
                "{PER}, la [[production]] commencera à {CITY} en [[automne]]. Les [[analystes]] "
                "prévoient une [[hausse]] des [[ventes]].",
        "medical": "[[Patiente]] {PER}, vue au [[cabinet]] de {CITY}. [[Diagnostic]] : "
                   "[[hypertension]]. [[Traitement]] par [[amlodipine]] 5 mg. [[Contrôle]] "
                   "avec le Dr {PER2} dans un [[mois]].",
        "contract": "Le présent [[Contrat]] est conclu entre {ORG} (le « [[Fournisseur]] ») "
                    "et {PER} (le « [[Client]] »). La [[Livraison]] a lieu à {CITY}. Le "
                    "[[Paiement]] est dû à 30 jours.",
    },
    "es": {
        "letter": "Estimado señor {PER}:\n\n[[Gracias]] por su [[carta]] del 3 de marzo. "
                  "[[Adjunto]] le envío el [[Contrato]] firmado y la [[Factura]]. "
                  "[[Atentamente]],\n{PER2}\n{ORG}, {CITY}",
        "ticket": "[[Asunto]]: [[Error]] al iniciar [[sesión]]\n\n[[Hola]], desde la "
                  "[[actualización]] la [[aplicación]] no arranca. [[Mi]] [[compañera]] {PER} "
                  "tiene el mismo [[problema]] en {CITY}. [[Gracias]],\n{PER2}",
        "news": "{ORG} presentó el [[martes]] su nuevo [[teléfono]]. [[Según]] el "
                "[[director]] {PER}, la [[producción]] empezará en {CITY} en [[otoño]]. Los "
                "[[analistas]] esperan más [[ventas]].",
        "medical": "[[Paciente]] {PER}, atendida en la [[consulta]] de {CITY}. [[Diagnóstico]]: "
                   "[[hipertensión]]. [[Tratamiento]] con [[enalapril]] 10 mg. [[Revisión]] "
                   "con el Dr. {PER2} en un [[mes]].",
        "contract": "El presente [[Contrato]] se celebra entre {ORG} (el \"[[Proveedor]]\") y "
                    "{PER} (el \"[[Cliente]]\"). La [[Entrega]] se realizará en {CITY}. El "
                    "[[Pago]] vence a los 30 días.",
    },
    "it": {
        "letter": "Gentile dottor {PER},\n\n[[Grazie]] per la sua [[lettera]] del 3 marzo. "
                  "[[Allego]] il [[Contratto]] firmato e la [[Fattura]]. Cordiali [[saluti]],"
                  "\n{PER2}\n{ORG}, {CITY}",
        "ticket": "[[Oggetto]]: [[Errore]] di [[accesso]]\n\n[[Buongiorno]], dopo "
                  "l'[[aggiornamento]] l'[[applicazione]] si chiude. [[La]] mia [[collega]] "
                  "{PER} ha lo stesso [[problema]] a {CITY}. [[Grazie]],\n{PER2}",
        "news": "{ORG} ha presentato [[martedì]] il nuovo [[telefono]]. [[Secondo]] il "
                "[[direttore]] {PER}, la [[produzione]] inizierà a {CITY} in [[autunno]]. Gli "
                "[[analisti]] prevedono [[vendite]] in crescita.",
        "medical": "[[Paziente]] {PER}, visitata nell'[[ambulatorio]] di {CITY}. [[Diagnosi]]: "
                   "[[ipertensione]]. [[Terapia]] con [[ramipril]] 5 mg. [[Controllo]] con il "
                   "dott. {PER2} tra un [[mese]].",
        "contract": "Il presente [[Contratto]] è stipulato tra {ORG} (il \"[[Fornitore]]\") e "
                    "{PER} (il \"[[Cliente]]\"). La [[Consegna]] avverrà a {CITY}. Il "
                    "[[Pagamento]] è dovuto entro 30 giorni.",
    },
    "nl": {
        "letter": "Geachte heer {PER},\n\n[[Hartelijk]] dank voor uw [[brief]] van 3 maart. "
                  "[[Hierbij]] stuur ik u het getekende [[Contract]] en de [[Factuur]]. Met "
                  "vriendelijke [[groet]],\n{PER2}\n{ORG}, {CITY}",
        "ticket": "[[Onderwerp]]: [[Inloggen]] mislukt\n\n[[Hallo]], sinds de [[update]] "
                  "start de [[app]] niet meer. [[Mijn]] [[collega]] {PER} heeft hetzelfde "
                  "[[probleem]] in {CITY}. [[Bedankt]],\n{PER2}",
        "news": "{ORG} presenteerde [[dinsdag]] een nieuwe [[telefoon]]. [[Volgens]] "
                "[[directeur]] {PER} begint de [[productie]] in {CITY} in het [[najaar]]. "
                "[[Analisten]] verwachten hogere [[verkopen]].",
        "medical": "[[Patiënte]] {PER} werd gezien in de [[praktijk]] in {CITY}. [[Diagnose]]: "
                   "[[hypertensie]]. [[Behandeling]] met [[amlodipine]] 5 mg. [[Controle]] bij "
                   "dr. {PER2} over een [[maand]].",
        "contract": "Deze [[Overeenkomst]] wordt gesloten tussen {ORG} (de \"[[Leverancier]]\") "
                    "en {PER} (de \"[[Klant]]\"). De [[Levering]] vindt plaats in {CITY}. De "
                    "[[Betaling]] is verschuldigd binnen 30 dagen.",
    },
}

_MARK_RE = re.compile(r"\[\[([^\]]+)\]\]|\{(PER2|PER|ORG|CITY)\}")


@dataclass(frozen=True)
class Item:
    """A designated ordinary word or a planted name: `text[start:end]`."""

    start: int
    end: int
    kind: str   # "ordinary", or the slot: "PER", "ORG", "CITY"


@dataclass(frozen=True)
class UtilityDocument:
    """One rendered template with its items."""

    doc_id: str
    language: str
    genre: str
    text: str
    items: tuple[Item, ...]


def render(template: str, fills: dict[str, str]) -> tuple[str, tuple[Item, ...]]:
    """The template's text with its marks removed and slots filled, and the items' offsets."""
    out: list[str] = []
    items: list[Item] = []
    cursor = length = 0
    for m in _MARK_RE.finditer(template):
        literal = template[cursor:m.start()]
        out.append(literal)
        length += len(literal)
        value = m.group(1) if m.group(1) is not None else fills[m.group(2)]
        kind = "ordinary" if m.group(1) is not None else m.group(2).rstrip("2")
        items.append(Item(length, length + len(value), kind))
        out.append(value)
        length += len(value)
        cursor = m.end()
    out.append(template[cursor:])
    return "".join(out), tuple(items)


def make_documents(copies: int = 4, seed: int = 2026) -> list[UtilityDocument]:
    """`copies` documents per language and genre, each with other names."""
    from faker import Faker

    documents = []
    for language, locale in LOCALES.items():
        fake = Faker(locale)
        fake.seed_instance(seed)
        for genre in GENRES:
            for copy in range(copies):
                fills = {"PER": f"{fake.first_name()} {fake.last_name()}",
                         "PER2": f"{fake.first_name()} {fake.last_name()}",
                         "ORG": fake.company(), "CITY": fake.city()}
                text, items = render(TEMPLATES[language][genre], fills)
                documents.append(UtilityDocument(f"{language}-{genre}-{copy}", language, genre,
                                                 text, items))
    return documents


def score(documents: list[UtilityDocument], rows: dict[str, dict]) -> dict[str, dict]:
    """Per language (and "all"): designated ordinary words kept as written, planted names
    hidden whole (every letter and digit inside a redacted entity), and the lost names.

    `rows[doc_id]` is an annotations row (`entities` with `start`, `end`, `redacted`)."""
    tally: dict[str, dict] = {}
    for doc in documents:
        hidden = bytearray(len(doc.text))
        for e in rows[doc.doc_id]["entities"]:
            if e["redacted"]:
                hidden[e["start"]:e["end"]] = b"\x01" * (e["end"] - e["start"])
        for key in (doc.language, "all"):
            t = tally.setdefault(key, {"words": 0, "kept": 0, "names": 0, "names_hidden": 0,
                                       "documents": 0, "lost": []})
            t["documents"] += 1
            for item in doc.items:
                covered = hidden[item.start:item.end]
                if item.kind == "ordinary":
                    t["words"] += 1
                    t["kept"] += covered.count(1) == 0
                else:
                    t["names"] += 1
                    whole = all(hidden[i] for i in range(item.start, item.end)
                                if doc.text[i].isalnum())
                    t["names_hidden"] += whole
                    if not whole:
                        t["lost"].append(f"{doc.doc_id} {item.kind}")
    return tally
