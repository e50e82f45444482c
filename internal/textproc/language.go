package textproc

import (
	"slices"
	"unicode"
)

// Language is a best guess at the language of a short text: "en" for
// English, a two-letter code for the other languages it knows by their
// function words (es, fr, de, it, pt, nl), "other" for text in a
// non-Latin script or with too few English words to call it English, and
// "" when the text has no words at all.
func Language(text string) string {
	words := Words(text)
	if len(words) == 0 {
		return ""
	}
	letters, latin := 0, 0
	for _, r := range text {
		if unicode.IsLetter(r) {
			letters++
			if unicode.Is(unicode.Latin, r) {
				latin++
			}
		}
	}
	if letters > 0 && latin*2 < letters {
		return "other"
	}
	english := 0
	counts := map[string]int{}
	for _, w := range words {
		if stopWords[w] {
			english++
		}
		for _, lang := range functionWords[w] {
			counts[lang]++
		}
	}
	best, n := "", 0
	for _, lang := range []string{"es", "fr", "de", "it", "pt", "nl"} { // a fixed order breaks ties
		if counts[lang] > n {
			best, n = lang, counts[lang]
		}
	}
	if n >= 2 && n > english {
		return best
	}
	return "en"
}

// functionWords maps the commonest words of other languages that are not
// also English words to the languages that use them.
var functionWords = func() map[string][]string {
	lists := map[string]string{
		"es": "el los las del que y en una por para con es qué cómo como hago nuestro nuestra nuestras nuestros mis tengo tenemos está están hace hoy pero muy más cuando dónde porque sus hay son ser estamos puedo",
		"fr": "le les des du et est une pour avec que qui nous notre nos je mon ma mes comment pourquoi quoi cest il elle sont pas mais très quand où vous votre sur dans être avons",
		"de": "der die das und ist ein eine nicht wie was wir unser unsere ich mein es spät für mit auf sind haben aber sehr wenn warum können unsere kunden",
		"it": "il lo gli di che è per con non come cosa nostro nostra noi mio sono ma molto quando perché abbiamo della delle",
		"pt": "os do da que é um uma para com não como nosso nossa nós meu são mas muito quando porque temos está fazer",
		"nl": "het een en niet hoe wat wij ons onze ik mijn zijn maar zeer wanneer waarom hebben",
	}
	m := map[string][]string{}
	for lang, list := range lists {
		for _, w := range Words(list) {
			if !stopWords[w] {
				m[w] = append(m[w], lang)
			}
		}
	}
	return m
}()

// TranslateBusinessWords returns the English words for the business words
// of a text in another language that it knows (a small glossary: sales,
// customers, prices, costs, staff, orders and the like), in order, each
// once. It lets a question asked in another language still be understood
// in part.
func TranslateBusinessWords(text string) []string {
	var out []string
	for _, w := range Words(text) {
		if en, ok := glossary[w]; ok && !slices.Contains(out, en) {
			out = append(out, en)
		}
	}
	return out
}

var glossary = func() map[string]string {
	lists := map[string]string{
		"sales":        "ventas venta ventes vente umsatz verkauf verkäufe vendite vendas verkoop",
		"customers":    "kundin kundinnen kundschaft clienti clientela clientes cliente clients client kunden kunde klanten klant",
		"prices":       "tarif tarifs tarifa tarifas tariffa tariffe precio precios prix preis preise prezzo prezzi preço preços prijs prijzen",
		"costs":        "costos costes coûts kosten costi custos",
		"profit":       "ganancias beneficios beneficio bénéfice bénéfices gewinn profitto lucro winst",
		"cash":         "dinero efectivo argent trésorerie geld liquidität soldi dinheiro",
		"staff":        "mitarbeitern mitarbeiterin mitarbeiterinnen angestellte angestellten beschäftigte salariés empleado personale colaboradores werknemers personeel empleados personal employés personnel mitarbeiter dipendenti funcionários medewerkers",
		"orders":       "pedidos pedido commandes commande bestellungen bestellung aufträge auftrag ordini ordine encomendas encomenda bestellingen bestelling",
		"angry":        "enojado enojada enfadado enfadada furioso furiosa colère furieux furieuse fâché fâchée wütend verärgert arrabbiato arrabbiata irritado irritada bravo brava boos",
		"damaged":      "roto rota dañado dañada cassé cassée cassés abîmé abîmée endommagé endommagée kaputt beschädigt rotto rotta danneggiato danneggiata quebrado quebrada danificado danificada kapot beschadigd",
		"team":         "equipo équipe squadra equipe",
		"business":     "negocio empresa entreprise unternehmen firma azienda negócio bedrijf",
		"hiring":       "contratar contratación embaucher recrutement einstellen assumere contratação",
		"delivery":     "entrega entregas livraison livraisons lieferung lieferungen consegna consegne levering",
		"marketing":    "marketing publicidad publicité werbung pubblicità publicidade",
		"growth":       "crecimiento croissance wachstum crescita crescimento groei",
		"churn":        "bajas abandono désabonnement kündigungen disdette cancelamentos",
		"suppliers":    "proveedores fournisseurs lieferanten fornitori fornecedores leveranciers",
		"late":         "tarde retraso retrasos atrasado retard retards verspätet verspätung verspätungen ritardo ritardi atraso atrasos laat vertraging",
		"materials":    "materiales matériaux material materialien materiali materiais materialen",
		"prospect":     "prospecto interesado prospect interessent interessenten potenziale prospecto prospect",
		"purchasing":   "compras achats einkauf beschaffung acquisti compras inkoop",
		"discount":     "descuento descuentos remise remises rabais rabatt rabatte sconto sconti desconto descontos korting",
		"refund":       "reembolso remboursement rückerstattung erstattung rimborso reembolso terugbetaling",
		"complaint":    "queja quejas reclamación plainte plaintes réclamation beschwerde beschwerden reklamation reclamo reclami reclamação reclamações klacht klachten",
		"returns":      "devolución devoluciones retour retours rücksendung rückgabe reso resi devolução devoluções",
		"cancel":       "cancelan cancelar cancelación annulent annuler résilient résiliation kündigen kündigung annullano disdire cancelam cancelar opzeggen",
		"retention":    "retención fidelización fidélisation rétention kundenbindung fidelizzazione retenção fidelização klantbehoud",
		"subscription": "suscripción abonnement abonnements abo abbonamento assinatura",
		"renewal":      "renovación renouvellement verlängerung rinnovo renovação verlenging",
		"contract":     "contrato contrat vertrag contratto contract",
		"quote":        "presupuestos cotización cotizaciones devis angebot angebote preventivo preventivi orçamento offerte",
		"margin":       "margen marge marges marge margine margini margem",
		"inventory":    "inventario stock inventaire lagerbestand lager magazzino estoque voorraad",
		"backlog":      "stauen staut acumulan accumulent accumulano acumulam pendientes arriéré rückstand arretrato acumulado achterstand",
		"appointments": "citas cita rendez-vous termin termine appuntamenti agendamentos afspraken",
		"training":     "formación capacitación formation schulung formazione treinamento formação opleiding",
		"usage":        "uso utilisation nutzung utilizzo utilização gebruik",
		"adoption":     "adopción adoption einführung adozione adoção adoptie",
		"competitor":   "competencia competidor concurrent concurrence konkurrent konkurrenz wettbewerber concorrente concorrenza concorrência",
		"negotiation":  "negociación negociar négociation négocier verhandlung verhandeln negoziazione negoziare negociação negociar onderhandeling",
		"decision":     "decisión décision entscheidung decisione decisão beslissing",
		"budget":       "presupuesto budget begroting",
		"shipping":     "envío envíos expédition versand spedizione envio verzending",
		"carrier":      "transportista transporteur spediteur corriere transportadora vervoerder",
		"compensation": "compensación indemnización compensation dédommagement entschädigung risarcimento compensação compensatie",
		"projects":     "obras proyectos projets chantiers projekte baustellen progetti cantieri projetos obras projecten",
		"machine":      "máquina machine maschine macchina macchine máquina",
		"size":         "talla taille größe taglia tamanho maat",
		"software":     "software logiciel software software software",
		"demand":       "demanda demande nachfrage domanda procura vraag",
		"capacity":     "capacidad capacité kapazität capacità capacidade capaciteit",
		"quality":      "calidad qualité qualität qualità qualidade kwaliteit",
		"deadline":     "plazo plazos délai délais frist fristen scadenza scadenze prazo prazos",
		"bottleneck":   "engpass engpässe goulot goulots étranglement embudo botella strozzatura bottiglia gargalo gargalos knelpunt knelpunten flessenhals",
		"production":   "producción production produktion fertigung produzione produção productie",
		"invoices":     "factura facturas facture factures rechnung rechnungen fattura fatture fatura faturas factuur facturen",
		"payment":      "pago pagos paiement paiements zahlung zahlungen pagamento pagamenti pagamentos betaling betalingen",
		"revenue":      "ingresos facturación chiffre umsätze fatturato receita faturamento omzet",
		"waiting":      "espera esperan attente attendent wartezeit wartezeiten warten attesa aspettano wachttijd wachten",
		"defects":      "defectos défauts mängel fehlerquote difetti defeitos gebreken",
		"salespeople":  "vendedores vendeurs verkäufer venditori verkopers",
		"debt":         "deuda deudas dette dettes schulden debito debiti dívida dívidas schuld schulden",
		"conversion":   "conversión konversion conversione conversão conversie",
		"onboarding":   "incorporación einarbeitung inserimento integração",
		"support":      "soporte kundendienst kundenservice supporto suporte klantenservice",
		"expensive":    "caro cara caros caras cari cher chère chers teuer costoso costosa costosi duur",
		"cheap":        "barato barata baratos billig billiger economico goedkoop goedkoper",
		"queue":        "cola colas warteschlange coda fila filas wachtrij",
		"unpaid":       "impagos impagados impayés impayées unbezahlt unbezahlte insoluti inadimplência onbetaald",
		"workers":      "trabajadores ouvriers arbeiter arbeitern lavoratori operai trabalhadores arbeiders",
		"equipment":    "equipos équipement équipements ausrüstung anlagen attrezzature equipamentos apparatuur",
		"bakery":       "panadería panaderías boulangerie boulangeries bäckerei bäckereien panetteria panetterie padaria padarias bakkerij bakkerijen",
		"oven":         "horno hornos four fours ofen öfen forno forni fornos",
		"buy":          "comprar compramos compro acheter achetons achète kaufen kaufe comprare compriamo compro kopen",
		"shop":         "tienda tiendas magasin magasins geschäft geschäfte negozio negozi loja lojas winkel winkels",
		"restaurant":   "restaurante restaurantes ristorante ristoranti",
		"clinic":       "clínica clínicas clinique cliniques klinik kliniken praxis clinica cliniche",
		"stockout":     "agotado agotados agotada agotadas épuisé épuisés rupture ausverkauft esaurito esauriti esgotado esgotados uitverkocht",
		"raise":        "subir subo subimos aumentar augmenter augmente augmentation erhöhen erhöhe erhöhung aumentare aumentiamo aumento verhogen verhoging",
		"expansion":    "expansión expansão espansione erweiterung ampliación ampliação uitbreiding expansion",
		"follow up":    "relancer relance seguimiento nachfassen nachhaken sollecitare sollecito acompanhamento opvolgen",
		"quarter":      "trimestre trimestres quartal quartals kwartaal",
		"pushy":        "insistente insistentes insistant insistante aufdringlich opdringerig",
		"product":      "producto productos produit produits produkt produkte prodotto prodotti produto produtos",
		"uses":         "usa usan utiliza utilizam utilise utilisent nutzt utilizza usano gebruikt",
		"threatens":    "amenaza amenazan menace menacent droht drohen minaccia minacciano ameaça ameaçam dreigt",
		"complains":    "quejan reclama reclaman plaint plaignent beschwert beschweren lamenta lamentano reclamam klaagt",
		"ingredients":  "harina farine mehl farina farinha meel ingredientes ingrédients zutaten ingredienti",
		"regulars":     "habituales habitués stammkunden abituali habituais",
		"kitchen":      "cocina cocinas cuisine cuisines küche küchen cucina cucine cozinha cozinhas keuken keukens",
		"cooks":        "cocinero cocineros cocinera cuisinier cuisiniers koch köche cuoco cuochi cozinheiro cozinheiros kok koks",
		"tables":       "mesas tische tavoli tafels",
		"menu":         "menú menù cardápio speisekarte menukaart",
		"dishes":       "platos plats gerichte piatti pratos gerechten",
		"overloaded":   "satura saturan saturada saturado saturée saturé überlastet überlastung sovraccarico sovraccarica sobrecarregado sobrecarregada overbelast",
		"rooms":        "habitaciones chambres zimmer camere quartos kamers",
		"occupancy":    "ocupación auslastung belegung occupazione ocupação bezetting",
		"season":       "temporada saison stagione seizoen",
		"platform":     "plataforma plateforme plattform piattaforma",
		"locations":    "locales sucursales succursales filiales filialen standorte sedi filiali vestigingen",
		"features":     "funcionalidades fonctionnalités funktionen funzionalità functies",
		"licences":     "licencias lizenzen licenze licenças licenties",
		"meeting":      "reunión reuniones réunion réunions besprechung riunione riunioni reunião reuniões vergadering",
		"conversation": "conversación gespräch gespräche conversazione conversa gesprek",
		"reviews":      "reseñas opiniones bewertungen bewertung recensioni avaliações recensies",
		"lose":         "perder perdemos perdre perdons verlieren perdere perdiamo verliezen",
		"reduce":       "reducir réduire reduzieren ridurre reduzir verminderen",
		"turnover":     "rotación fluktuation rotatividade verloop",
		"clothes":      "ropa vêtements kleidung abbigliamento roupa roupas kleding",
		"close":        "cerrar cierro cerramos cierre fermer ferme fermons fermeture schließen schließe schließung chiudere chiudo chiudiamo chiusura fechar fecho fechamos fechamento sluiten sluit",
	}
	m := map[string]string{}
	for en, list := range lists {
		for _, w := range Words(list) {
			if other, ok := m[w]; ok && other != en {
				// Map order would decide between the two: a word means one thing here.
				panic("textproc: glossary word " + w + " means both " + other + " and " + en)
			}
			m[w] = en
		}
	}
	return m
}()

// IsEnglish reports whether Language(text) is English (or the text has no
// words to tell by).
func IsEnglish(text string) bool {
	l := Language(text)
	return l == "en" || l == ""
}
